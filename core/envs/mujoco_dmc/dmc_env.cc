// Shared base of the DeepMind Control Suite family; see dmc_env.h.
#include "core/envs/mujoco_dmc/dmc_env.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

namespace pp::mujoco_dmc {

namespace {

void CheckValueAtMargin(Sigmoid s, double v) {
  const bool zero_ok = s == Sigmoid::kCosine || s == Sigmoid::kLinear || s == Sigmoid::kQuadratic;
  if (zero_ok ? !(v >= 0 && v < 1) : !(v > 0 && v < 1)) {
    throw std::invalid_argument("tolerance: value_at_margin must be in " + std::string(zero_ok ? "[0, 1)" : "(0, 1)") +
                                ", got " + std::to_string(v));
  }
}

// dm_control's _sigmoids(x, value_at_1, sigmoid) for x >= 0.
double SigmoidValue(double x, double v, Sigmoid s) {
  switch (s) {
    case Sigmoid::kGaussian: {
      const double scale = std::sqrt(-2 * std::log(v));
      return std::exp(-0.5 * (x * scale) * (x * scale));
    }
    case Sigmoid::kHyperbolic: return 1 / std::cosh(x * std::acosh(1 / v));
    case Sigmoid::kLongTail: {
      const double scale = std::sqrt(1 / v - 1);
      return 1 / ((x * scale) * (x * scale) + 1);
    }
    case Sigmoid::kReciprocal: return 1 / (std::abs(x) * (1 / v - 1) + 1);
    case Sigmoid::kCosine: {
      const double scaled = x * (std::acos(2 * v - 1) / kPi);
      return std::abs(scaled) < 1 ? (1 + std::cos(kPi * scaled)) / 2 : 0.0;
    }
    case Sigmoid::kLinear: {
      const double scaled = x * (1 - v);
      return std::abs(scaled) < 1 ? 1 - scaled : 0.0;
    }
    case Sigmoid::kQuadratic: {
      const double scaled = x * std::sqrt(1 - v);
      return std::abs(scaled) < 1 ? 1 - scaled * scaled : 0.0;
    }
    case Sigmoid::kTanhSquared: {
      const double t = std::tanh(x * std::atanh(std::sqrt(1 - v)));
      return 1 - t * t;
    }
  }
  return 0.0;
}

// The shared model's twin with actuation disabled (dm_control disables it on its own model during after_reset;
// the shared model is read-only, so the flag lives in a second compiled copy, made once per model).
ModelPtr NoActuationTwin(const ModelPtr& m) {
  static auto* mu = new std::mutex;
  static auto* twins = new std::map<const mjModel*, ModelPtr>;
  std::lock_guard<std::mutex> lk(*mu);
  auto it = twins->find(m.get());
  if (it != twins->end()) return it->second;
  mjModel* copy = mj_copyModel(nullptr, m.get());
  if (copy == nullptr) throw std::runtime_error("mj_copyModel failed (out of memory?)");
  copy->opt.disableflags |= mjDSBL_ACTUATION;
  // The twin keeps its source alive: the map's key pointer stays valid as long as the entry exists.
  ModelPtr twin(copy, [keep = m](const mjModel* x) { mj_deleteModel(const_cast<mjModel*>(x)); });
  (*twins)[m.get()] = twin;
  return twin;
}

}  // namespace

double Tolerance(double x, double lower, double upper, double margin, Sigmoid sigmoid, double value_at_margin) {
  if (lower > upper) throw std::invalid_argument("tolerance: lower bound must be <= upper bound");
  if (margin < 0) throw std::invalid_argument("tolerance: margin must be non-negative");
  if (lower <= x && x <= upper) return 1.0;
  if (margin == 0) return 0.0;
  CheckValueAtMargin(sigmoid, value_at_margin);
  const double d = (x < lower ? lower - x : x - upper) / margin;
  return SigmoidValue(d, value_at_margin, sigmoid);
}

std::vector<ConfigKey> DomainKeys(const std::string& model_builder, int frame_skip,
                                  const std::vector<DomainTask>& tasks) {
  std::vector<std::string> names;
  for (const DomainTask& t : tasks) names.push_back(t.name);
  return {
      {"max_episode_steps", int64_t{1000}, "truncate episodes after this many steps (dm_control's time limit)", {}},
      {"xml_file",
       model_builder,
       "the MuJoCo model: an XML file path, or \"dm_control:<module>.<function>(<literal kwargs>)\", a model builder "
       "of the installed dm_control called at make time (its XML and assets are cached on disk)",
       {}},
      {"frame_skip", int64_t{frame_skip}, "physics steps per env step (dm_control's n_sub_steps)", {}},
      {"task_name", names.front(), "the dm_control task of this domain (each task id sets it)", names},
  };
}

int TaskIndex(const Config& c, const std::vector<DomainTask>& tasks) {
  const std::string name = c.Get<std::string>("task_name");
  auto it = std::find_if(tasks.begin(), tasks.end(), [&](const DomainTask& t) { return t.name == name; });
  if (it == tasks.end()) throw std::invalid_argument("config key 'task_name': unknown task '" + name + "'");
  return static_cast<int>(it - tasks.begin());
}

ModelPtr LoadModel(const Config& c) {
  const std::string path = c.Get<std::string>("xml_file");
  if (path.rfind("dm_control:", 0) == 0) {
    throw std::invalid_argument("config key 'xml_file' (" + path +
                                ") names a dm_control model builder that was not run; create envs through "
                                "parallel_pool.make()");
  }
  ModelPtr m = pp::mujoco::LoadModelFile(path, "config key 'xml_file' selects it");
  if (m->nplugin > 0) {
    throw std::invalid_argument("config key 'xml_file': models with plugins are not supported (" + path + ")");
  }
  return m;
}

void DefineDmcSpec(const Config& c, SpecBuilder& b, const std::vector<ObsDef>& obs) {
  IntInRange(c, "frame_skip", 1, 100000);
  for (const ObsDef& o : obs) b.Obs(o.name, DType::kFloat64, o.shape);
  const ModelPtr m = LoadModel(c);
  const int nu = static_cast<int>(m->nu);
  std::vector<double> lo(nu), hi(nu);
  for (int i = 0; i < nu; ++i) {
    const bool limited = m->actuator_ctrllimited[i];
    lo[i] = limited ? m->actuator_ctrlrange[2 * i] : -mjMAXVAL;
    hi[i] = limited ? m->actuator_ctrlrange[2 * i + 1] : mjMAXVAL;
  }
  b.Action("action", DType::kFloat64, {nu}, lo, hi);
  b.Reward(DType::kFloat64);
}

DmcEnv::DmcEnv(const Config& c, int env_id, uint64_t seed, bool own_model)
    : Env(c, env_id, seed), model_(LoadModel(c)), m_(model_.get()), frame_skip_(c.Get<int>("frame_skip")) {
  if (own_model) {
    own_ = mj_copyModel(nullptr, model_.get());
    if (own_ == nullptr) throw std::runtime_error("mj_copyModel failed (out of memory?)");
    m_ = own_;
  } else {
    no_actuation_ = NoActuationTwin(model_);
  }
  d_ = mj_makeData(m_);
  if (d_ == nullptr) {
    if (own_ != nullptr) mj_deleteModel(own_);
    throw std::runtime_error("mj_makeData failed (out of memory?)");
  }
}

DmcEnv::~DmcEnv() {
  mj_deleteData(d_);
  if (own_ != nullptr) mj_deleteModel(own_);
}

mjModel* DmcEnv::MutableModel() {
  if (own_ == nullptr) throw std::logic_error("MutableModel() needs own_model = true in the task's constructor");
  return own_;
}

int DmcEnv::Id(mjtObj type, const char* name) const {
  const int id = mj_name2id(m_, type, name);
  if (id < 0) {
    throw std::invalid_argument(std::string("the MuJoCo model has no ") + mju_type2Str(type) + " named '" + name +
                                "' (config key 'xml_file' selects the model)");
  }
  return id;
}

std::vector<double> DmcEnv::SaveState() const {
  const int physics = mj_stateSize(m_, mjSTATE_INTEGRATION);
  std::vector<double> s(static_cast<size_t>(physics + TaskStateSize()));
  mj_getState(m_, d_, s.data(), mjSTATE_INTEGRATION);
  GetTaskState(s.data() + physics);
  return s;
}

void DmcEnv::LoadState(const std::vector<double>& s) {
  const int physics = mj_stateSize(m_, mjSTATE_INTEGRATION);
  if (s.size() != static_cast<size_t>(physics + TaskStateSize())) {
    throw std::invalid_argument("a snapshot of this task has " + std::to_string(physics + TaskStateSize()) +
                                " values (MuJoCo integration state, task state), got " + std::to_string(s.size()));
  }
  mj_setState(m_, d_, s.data(), mjSTATE_INTEGRATION);
  SetTaskState(s.data() + physics);
  mj_step1(m_, d_);
}

void DmcEnv::AfterReset() {
  if (own_ != nullptr) {
    const int saved = own_->opt.disableflags;
    own_->opt.disableflags |= mjDSBL_ACTUATION;
    mj_forward(own_, d_);
    own_->opt.disableflags = saved;
  } else {
    mj_forward(no_actuation_.get(), d_);
  }
}

void DmcEnv::PhysicsStep() {
  // dm_control's Physics._step_with_up_to_date_position_velocity (legacy_step, the suite's default): mjData's
  // position/velocity-dependent fields stay in sync with qpos/qvel after each step.
  if (m_->opt.integrator != mjINT_RK4) {
    mj_step2(m_, d_);
    for (int i = 1; i < frame_skip_; ++i) mj_step(m_, d_);
  } else {
    for (int i = 0; i < frame_skip_; ++i) mj_step(m_, d_);
  }
  mj_step1(m_, d_);
}

void DmcEnv::Reset(Output& out) {
  mj_resetData(m_, d_);
  normal_.reset();  // no cached variate carries over: a reset depends only on gen_'s state
  InitializeEpisode();
  AfterReset();
  WriteObservation(out);
}

void DmcEnv::Step(const ActionView& action, Output& out) {
  BeforeStep(action.Get<double>(0));
  PhysicsStep();
  AfterStep();
  out.SetReward(Reward());
  WriteObservation(out);
  out.SetTerminated(Terminated());
}

std::vector<double> DmcEnv::GetState() const {
  std::vector<double> s(static_cast<size_t>(PhysicsStateSize() + TaskStateSize()));
  double* o = Put(s.data(), d_->qpos, static_cast<int>(m_->nq));
  o = Put(o, d_->qvel, static_cast<int>(m_->nv));
  o = Put(o, d_->act, static_cast<int>(m_->na));
  GetTaskState(o);
  return s;
}

void DmcEnv::SetState(const std::vector<double>& s) {
  const size_t physics = static_cast<size_t>(PhysicsStateSize());
  const size_t full = physics + static_cast<size_t>(TaskStateSize());
  if (s.size() != physics && s.size() != full) {
    throw std::invalid_argument("state must have nq + nv + na = " + std::to_string(physics) +
                                " values (dm_control's physics.get_state(): qpos, qvel, act)" +
                                (full != physics ? ", or " + std::to_string(full) + " with the task's state" : "") +
                                ", got " + std::to_string(s.size()));
  }
  const double* p = s.data();
  std::memcpy(d_->qpos, p, sizeof(double) * m_->nq);
  std::memcpy(d_->qvel, p + m_->nq, sizeof(double) * m_->nv);
  std::memcpy(d_->act, p + m_->nq + m_->nv, sizeof(double) * m_->na);
  if (s.size() == full && full != physics) SetTaskState(p + physics);
  AfterReset();
}

void DmcEnv::RandomizeLimitedAndRotationalJoints() {
  for (int j = 0; j < m_->njnt; ++j) {
    const int type = m_->jnt_type[j];
    const double lo = m_->jnt_range[2 * j], hi = m_->jnt_range[2 * j + 1];
    double* q = d_->qpos + m_->jnt_qposadr[j];
    if (m_->jnt_limited[j]) {
      if (type == mjJNT_HINGE || type == mjJNT_SLIDE) {
        q[0] = Uniform(lo, hi);
      } else if (type == mjJNT_BALL) {
        // randomizers.random_limited_quaternion: a N(0, I) axis, an angle U[0, 1) * limit
        double axis[3] = {Normal(), Normal(), Normal()};
        mju_normalize3(axis);
        const double angle = Rand() * hi;
        mju_axisAngle2Quat(q, axis, angle);
      }
    } else if (type == mjJNT_HINGE) {
      q[0] = Uniform(-kPi, kPi);
    } else if (type == mjJNT_BALL || type == mjJNT_FREE) {
      double* quat = type == mjJNT_BALL ? q : q + 3;
      for (int i = 0; i < 4; ++i) quat[i] = type == mjJNT_BALL ? Normal() : Rand();
      const double norm = std::sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2] + quat[3] * quat[3]);
      for (int i = 0; i < 4; ++i) quat[i] /= norm;
    }
  }
}

}  // namespace pp::mujoco_dmc
