// Shared code of the MuJoCo (gymnasium suite) family; see mujoco_env.h.
#include "core/envs/mujoco_gym/mujoco_env.h"

#include <algorithm>

#include <cstdlib>

#include "core/envs/common/mujoco_model.h"

namespace pp::mujoco_gym {

std::string ModelPath(const Config& c) {
  const std::string xml = c.Get<std::string>("xml_file");
  if (xml.empty()) throw std::invalid_argument("config key 'xml_file' is empty");
  if (xml[0] == '/' || xml[0] == '.') return xml;
  if (xml[0] == '~') {
    const char* home = std::getenv("HOME");
    return std::string(home ? home : "") + xml.substr(1);
  }
  std::string base = c.Get<std::string>("base_path");
  if (base.rfind("{pkgdir:", 0) == 0) {  // parallel_pool.registry resolves it where the package is installed
    const std::string pkg = base.substr(8, base.find('}') - 8);
    throw std::invalid_argument("config key 'base_path' (" + base + ") names the files of the Python package '" + pkg +
                                "', which is not installed: pip install " + pkg + " (or pass base_path=<directory>)");
  }
  if (!base.empty() && base.back() != '/') base += '/';
  return base + xml;
}

ModelPtr LoadModel(const std::string& path) {
  return pp::mujoco::LoadModelFile(path, "config keys 'base_path' and 'xml_file' select it");
}

std::vector<ConfigKey> TaskKeys(int version, const char* xml_file, int frame_skip, int max_episode_steps,
                                double reward_threshold, std::initializer_list<ConfigKey> own,
                                const std::vector<ConfigKey>& more) {
  std::vector<ConfigKey> keys = {
      {"max_episode_steps", int64_t{max_episode_steps}, "truncate episodes after this many steps", {}},
      {"reward_threshold", reward_threshold, "the score at which the task counts as solved (informational)", {}},
      {"base_path",
       std::string("{pkgdir:gymnasium}/envs/mujoco/assets"),
       "directory of the model XML files (default: the MuJoCo assets of the installed gymnasium package)",
       {}},
      {"xml_file",
       std::string(xml_file),
       "model file: relative to base_path, or a path starting with '/', '.' or '~' (as gymnasium)",
       {}},
      {"frame_skip", int64_t{frame_skip}, "MuJoCo steps per env step", {}},
      {"frame_stack", int64_t{1}, "stack the last k observations (obs shape (k, dim) when k > 1)", {}},
      {"post_constraint",
       true,
       "run mj_rnePostConstraint after stepping so cfrc_ext is up to date (gymnasium 1.x does, for v4 too); "
       "only tasks that read cfrc_ext pay for it",
       {}},
      {"gymnasium_v5_render_camera",
       version == 5,
       "render with the camera of gymnasium's -v5 task (else -v4's); EnvPool's key and defaults",
       {}},
  };
  keys.insert(keys.end(), own.begin(), own.end());
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

ConfigKey ExcludePositionsKey(const char* what) {
  return {"exclude_current_positions_from_observation",
          true,
          std::string("drop the root ") + what + " from the observation",
          {}};
}
ConfigKey ForwardWeightKey(double w) {
  return {"forward_reward_weight", w, "weight of the forward velocity reward", {}};
}
ConfigKey CtrlWeightKey(double w) { return {"ctrl_cost_weight", w, "weight of the control cost", {}}; }
ConfigKey ContactWeightKey(double w) { return {"contact_cost_weight", w, "weight of the contact cost", {}}; }
ConfigKey HealthyRewardKey(double r) { return {"healthy_reward", r, "reward per healthy (alive) step", {}}; }
ConfigKey TerminateKey() {
  return {"terminate_when_unhealthy", true, "terminate when the state leaves the healthy range", {}};
}
ConfigKey LegacyHealthyKey(int version) {
  return {
      "legacy_healthy_reward", version == 4, "v4: healthy reward also when unhealthy if terminate_when_unhealthy", {}};
}
ConfigKey RewardIfNotTerminatedKey(int version) {
  return {"reward_if_not_terminated", version == 5, "pay healthy_reward only on non-terminal steps (v5)", {}};
}
ConfigKey RewardAfterStepKey(int version) {
  return {
      "reward_after_step", version == 5, "compute the reward from the state after the step (v5) or before (v4)", {}};
}
ConfigKey ResetNoiseKey(double s, bool normal_qvel) {
  return {"reset_noise_scale",
          s,
          normal_qvel ? "qpos += U(-s, s), qvel = s * N(0, 1) on reset" : "qpos += U(-s, s), qvel = U(-s, s) on reset",
          {}};
}
// a range's end may be open (+-inf: no bound on that side)
ConfigKey MinKey(const std::string& name, double lo, const std::string& doc) {
  return {name + "_min", lo, doc, {}, true};
}
ConfigKey MaxKey(const std::string& name, double hi, const std::string& doc) {
  return {name + "_max", hi, doc, {}, true};
}

namespace {
template <typename T>
T Optional(const Config& c, const char* key) {
  return c.Has(key) ? c.Get<T>(key) : T{};
}
}  // namespace

SharedParams::SharedParams(const Config& c)
    : no_pos(Optional<bool>(c, "exclude_current_positions_from_observation")),
      terminate(Optional<bool>(c, "terminate_when_unhealthy")),
      legacy_healthy(Optional<bool>(c, "legacy_healthy_reward")),
      if_not_terminated(Optional<bool>(c, "reward_if_not_terminated")),
      after_step(Optional<bool>(c, "reward_after_step")),
      forward_w(Optional<double>(c, "forward_reward_weight")),
      ctrl_w(Optional<double>(c, "ctrl_cost_weight")),
      contact_w(Optional<double>(c, "contact_cost_weight")),
      healthy_reward(Optional<double>(c, "healthy_reward")),
      z_min(Optional<double>(c, "healthy_z_min")),
      z_max(Optional<double>(c, "healthy_z_max")),
      noise(Optional<double>(c, "reset_noise_scale")) {}

double SharedParams::CtrlCost(const double* a, int n) const {
  double s = 0;
  for (int i = 0; i < n; ++i) s += a[i] * a[i];
  return ctrl_w * s;
}

InfoFields::InfoFields(const std::vector<const char*>& declared) {
  static constexpr std::array<const char*, kNumFields> kNames = {
      "x_position",       "y_position",      "distance_from_origin", "z_distance_from_origin",
      "x_velocity",       "y_velocity",      "reward_forward",       "reward_run",
      "reward_fwd",       "forward_reward",  "reward_ctrl",          "reward_contact",
      "reward_survive",   "reward_linvel",   "reward_quadctrl",      "reward_alive",
      "reward_impact",    "reward_linup",    "reward_dist",          "reward_near",
      "distance_penalty", "velocity_penalty"};
  slot_.fill(-1);
  for (int f = 0; f < kNumFields; ++f) {
    for (size_t j = 0; j < declared.size(); ++j) {
      if (std::strcmp(kNames[f], declared[j]) == 0) slot_[f] = static_cast<int>(j);
    }
  }
}

void DefineCommonSpec(const Config& c, SpecBuilder& b, const mjModel* m, int obs_dim,
                      const std::vector<const char*>& info) {
  const int k = IntInRange(c, "frame_stack", 1, 1024);
  IntInRange(c, "frame_skip", 1, 100000);
  if (k == 1) {
    b.Obs("obs", DType::kFloat64, {obs_dim});
  } else {
    b.Obs("obs", DType::kFloat64, {k, obs_dim});
  }
  const Dims n(m);
  std::vector<double> lo(n.nu), hi(n.nu);
  for (int i = 0; i < n.nu; ++i) {
    const bool limited = m->actuator_ctrllimited[i];
    lo[i] = limited ? m->actuator_ctrlrange[2 * i] : -kInf;
    hi[i] = limited ? m->actuator_ctrlrange[2 * i + 1] : kInf;
  }
  b.Action("action", DType::kFloat64, {n.nu}, lo, hi);
  b.Reward(DType::kFloat64);
  for (const char* name : info) b.Info(name, DType::kFloat64);
}

MujocoEnv::MujocoEnv(const Config& c, int env_id, uint64_t seed)
    : Env(c, env_id, seed),
      model_(LoadModel(c)),
      m_(model_.get()),
      n_(m_),
      frame_skip_(c.Get<int>("frame_skip")),
      post_constraint_(c.Get<bool>("post_constraint")),
      dt_(model_->opt.timestep * c.Get<int>("frame_skip")),
      frame_stack_(c.Get<int>("frame_stack")) {
  d_ = mj_makeData(m_);
  if (d_ == nullptr) throw std::runtime_error("mj_makeData failed (out of memory?)");
  last_substep_.resize(static_cast<size_t>(mj_stateSize(m_, mjSTATE_INTEGRATION)));
}

MujocoEnv::~MujocoEnv() {
  if (d_ != nullptr) mj_deleteData(d_);
}

std::vector<double> MujocoEnv::GetState() const {
  std::vector<double> s(static_cast<size_t>(n_.nq + n_.nv));
  std::memcpy(s.data(), d_->qpos, sizeof(double) * n_.nq);
  std::memcpy(s.data() + n_.nq, d_->qvel, sizeof(double) * n_.nv);
  return s;
}

void MujocoEnv::SetState(const std::vector<double>& s) {
  if (s.size() != static_cast<size_t>(n_.nq + n_.nv)) {
    throw std::invalid_argument("state must have nq + nv = " + std::to_string(n_.nq) + " + " + std::to_string(n_.nv) +
                                " values (qpos then qvel), got " + std::to_string(s.size()));
  }
  std::memcpy(d_->qpos, s.data(), sizeof(double) * n_.nq);
  std::memcpy(d_->qvel, s.data() + n_.nq, sizeof(double) * n_.nv);
  mj_forward(m_, d_);
  stepped_ = false;
}

std::vector<double> MujocoEnv::SaveState() const {
  const int size = mj_stateSize(m_, mjSTATE_INTEGRATION);
  std::vector<double> s = {stepped_ ? 1.0 : 0.0, cfrc_ ? 1.0 : 0.0};
  s.resize(2 + static_cast<size_t>(size));
  if (stepped_) {
    std::copy(last_substep_.begin(), last_substep_.end(), s.begin() + 2);
  } else {
    mj_getState(m_, d_, s.data() + 2, mjSTATE_INTEGRATION);
  }
  s.insert(s.end(), stack_.begin(), stack_.end());
  return s;
}

void MujocoEnv::LoadState(const std::vector<double>& s) {
  const size_t size = static_cast<size_t>(mj_stateSize(m_, mjSTATE_INTEGRATION));
  if (s.size() != 2 + size + stack_.size() || (s[0] != 0.0 && s[0] != 1.0) || (s[1] != 0.0 && s[1] != 1.0)) {
    throw std::invalid_argument("a MuJoCo snapshot of this task has " + std::to_string(2 + size + stack_.size()) +
                                " values (flags, integration state, frame stack), got " + std::to_string(s.size()));
  }
  mj_setState(m_, d_, s.data() + 2, mjSTATE_INTEGRATION);
  stepped_ = s[0] == 1.0;
  cfrc_ = s[1] == 1.0;
  if (stepped_) {
    std::copy(s.begin() + 2, s.begin() + 2 + static_cast<std::ptrdiff_t>(size), last_substep_.begin());
    mj_step(m_, d_);  // the last substep again: mjData as the step left it
    if (cfrc_) mj_rnePostConstraint(m_, d_);
  } else {
    mj_forward(m_, d_);
  }
  std::copy(s.begin() + 2 + static_cast<std::ptrdiff_t>(size), s.end(), stack_.begin());
}

void MujocoEnv::ResetUniformNoise(double scale, bool normal_qvel) {
  for (int i = 0; i < n_.nq; ++i) d_->qpos[i] = m_->qpos0[i] + Uniform(-scale, scale);
  for (int i = 0; i < n_.nv; ++i) d_->qvel[i] = normal_qvel ? scale * Normal() : Uniform(-scale, scale);
}

void MujocoEnv::ObsEnd(Output& out, bool reset) {
  if (frame_stack_ == 1) return;
  const size_t dim = static_cast<size_t>(obs_dim_);
  double* newest = stack_.data() + (frame_stack_ - 1) * dim;
  if (reset) {
    for (int i = 0; i < frame_stack_ - 1; ++i) std::memcpy(stack_.data() + i * dim, newest, dim * sizeof(double));
  }
  std::memcpy(out.Obs<double>(0), stack_.data(), stack_.size() * sizeof(double));
  // shift for the next step: drop the oldest frame
  std::memmove(stack_.data(), stack_.data() + dim, (stack_.size() - dim) * sizeof(double));
}

}  // namespace pp::mujoco_gym
