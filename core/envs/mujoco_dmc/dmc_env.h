// Shared base of the DeepMind Control Suite family (EnvPool's `envpool.mujoco.dmc` ids), aligned with dm_control
// 1.0.50's suite on MuJoCo 3.17. One env type per dm_control domain (CartpoleEnv, CheetahEnv, ...); the config key
// `task_name` picks the task within the domain, as in EnvPool. A domain header only adds its observations, its
// episode initialization, its reward and (rarely) its termination; this base does everything else exactly as
// dm_control's control.Environment + mujoco.Physics do:
//
//   reset: mj_resetData; the task's InitializeEpisode() (dm_control's initialize_episode, drawing from this env's
//          seeded generator instead of numpy's RandomState); AfterReset() = mj_forward with actuation disabled
//          (dm_control's Physics.after_reset); the first observation.
//   step:  BeforeStep(action) (default: ctrl = action, no clipping: MuJoCo clamps to ctrlrange); `frame_skip`
//          physics steps the way dm_control's legacy_step does them (mj_step2, mj_step x (n - 1), mj_step1; RK4:
//          mj_step x n, mj_step1); AfterStep(); Reward(); the observation; Terminated() (dm_control's
//          get_termination returning 0.0: terminated; the time limit is the pool's max_episode_steps, a
//          truncation with discount 1 as in dm_control).
//
// Models: the config key `xml_file` is a MuJoCo XML path. Its default for every task is a dm_control model builder,
// "dm_control:suite.<domain>.<function>(<literal kwargs>)" (e.g. "dm_control:suite.cartpole.get_model_and_assets(
// num_poles=2)"), which parallel_pool/dmc_models.py calls at make time and writes (XML + assets) to a cache
// directory: the model is exactly dm_control's, including the ones it edits in Python (cartpole's poles, swimmer's
// links, manipulator's objects, ...), and nothing Python runs per step. See docs/decisions.md ("DMC models").
//
// Models are shared by all envs of a process (compiled once) unless a task changes model fields per episode
// (targets stored in geom_pos/site_pos, terrain heightfields, ...): such a task passes own_model = true and gets
// its own copy in MutableModel(), as each dm_control env has.
//
// State (GetState/SetState): dm_control's physics.get_state() layout, qpos, qvel, act (models with plugins are
// rejected), followed by the task's own state that lives outside mjData (TaskStateSize() values, e.g. a target
// position; none for most tasks). SetState accepts the physics part alone (task state kept) or both, then runs
// AfterReset(): the env continues from that state exactly as dm_control does after
// `physics.set_state(s); physics.after_reset()`.
#pragma once

#include <mujoco/mujoco.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/engine/spec.h"
#include "core/envs/common/mujoco_model.h"

namespace pp::mujoco_dmc {

using pp::mujoco::ModelPtr;

constexpr double kPi = 3.14159265358979323846;

// ---- rewards.tolerance (dm_control/utils/rewards.py), scalar version with the same formulas.
enum class Sigmoid { kGaussian, kHyperbolic, kLongTail, kReciprocal, kCosine, kLinear, kQuadratic, kTanhSquared };

// 1 inside [lower, upper]; outside, margin == 0: 0, else sigmoid(distance to the nearest bound / margin) with
// sigmoid(1) == value_at_margin. Throws std::invalid_argument where dm_control raises ValueError.
double Tolerance(double x, double lower, double upper, double margin = 0.0, Sigmoid sigmoid = Sigmoid::kGaussian,
                 double value_at_margin = 0.1);

// ---- config keys
// The keys of a domain: xml_file (the default model builder, see above), frame_skip (dm_control's n_sub_steps =
// control_timestep / model timestep; EnvPool's default per domain), task_name (one of `tasks`; each task id
// overrides it), and max_episode_steps (dm_control's time_limit / control_timestep: 1000 for every suite task).
// One task of a domain, as the domain's Tasks() lists it: dm_control's task name, EnvPool's id for it, and the model
// builder where the task edits the domain's model (empty: the domain's default builder). The family registers
// exactly these ids (PP_REGISTER_DMC_DOMAIN), so a task and its id are written once, in the domain's header.
struct DomainTask {
  std::string name;
  std::string id;
  std::string model = {};
};

std::vector<ConfigKey> DomainKeys(const std::string& model_builder, int frame_skip,
                                  const std::vector<DomainTask>& tasks);

// One named observation array (float64): `name` in the front-ends' dicts ("obs:<name>" in the raw batch).
struct ObsDef {
  std::string name;
  std::vector<int> shape;  // {} for a scalar
};

// Declares the observations `obs`, the float64 action "action" bounded by the actuators' ctrlrange (dm_control's
// action_spec: unbounded actuators get +-mjMAXVAL, 1e10) and the float64 reward.
void DefineDmcSpec(const Config& c, SpecBuilder& b, const std::vector<ObsDef>& obs);

// The model of a config (loaded through the shared cache). Throws naming the config key when it is unusable.
ModelPtr LoadModel(const Config& c);

class DmcEnv : public Env {
 public:
  DmcEnv(const Config& c, int env_id, uint64_t seed, bool own_model = false);
  ~DmcEnv() override;

  void Reset(Output& out) final;
  void Step(const ActionView& action, Output& out) final;
  std::vector<double> GetState() const final;
  void SetState(const std::vector<double>& state) final;
  // Snapshots: mjSTATE_INTEGRATION (qpos, qvel, act, warm start, ctrl, time, ...) then the task's state. A step
  // ends with mj_step1, as a restore does, so mjData's position/velocity fields are those the step left (reset:
  // those mj_forward left; actuation is not part of them).
  std::vector<double> SaveState() const final;
  void LoadState(const std::vector<double>& state) final;

 protected:
  // ---- the task's part (dm_control's Task methods)
  // Set the episode's initial state in d_ (and task state), drawing randomness from Uniform/Normal/...; mjData has
  // just been reset (mj_resetData). The base runs AfterReset() afterwards.
  virtual void InitializeEpisode() = 0;
  // Apply the action (float64, nu values). Default: ctrl = action.
  virtual void BeforeStep(const double* action) { std::memcpy(d_->ctrl, action, sizeof(double) * m_->nu); }
  virtual void AfterStep() {}
  virtual double Reward() = 0;
  // dm_control's get_termination() returning 0.0 (a terminal step, discount 0).
  virtual bool Terminated() { return false; }
  // Write every observation array of the spec: Obs(out, i) is array i in the order the task declared them.
  virtual void WriteObservation(Output& out) = 0;
  // Task state kept outside mjData, appended to GetState (see the header comment).
  virtual int TaskStateSize() const { return 0; }
  virtual void GetTaskState(double* s) const { (void)s; }
  virtual void SetTaskState(const double* s) { (void)s; }

  // ---- physics
  // dm_control's Physics.after_reset: mj_forward with actuation disabled.
  void AfterReset();
  // dm_control's Physics.forward: mj_forward.
  void Forward() { mj_forward(m_, d_); }
  // This env's own model copy (only with own_model = true; throws otherwise).
  mjModel* MutableModel();

  // ---- names -> ids (call in the constructor; throws std::invalid_argument naming the missing object)
  int Id(mjtObj type, const char* name) const;
  int BodyId(const char* name) const { return Id(mjOBJ_BODY, name); }
  int GeomId(const char* name) const { return Id(mjOBJ_GEOM, name); }
  int SiteId(const char* name) const { return Id(mjOBJ_SITE, name); }
  int JointId(const char* name) const { return Id(mjOBJ_JOINT, name); }
  int SensorId(const char* name) const { return Id(mjOBJ_SENSOR, name); }
  int ActuatorId(const char* name) const { return Id(mjOBJ_ACTUATOR, name); }
  // Address in qpos / qvel of a joint (by name), and a sensor's values in sensordata.
  int QposAdr(const char* joint) const { return m_->jnt_qposadr[JointId(joint)]; }
  int QvelAdr(const char* joint) const { return m_->jnt_dofadr[JointId(joint)]; }
  const double* SensorData(int sensor_id) const { return d_->sensordata + m_->sensor_adr[sensor_id]; }

  // ---- randomness (this env's generator, seeded by the pool)
  double Uniform(double lo, double hi) { return lo + (hi - lo) * unit_(gen_); }
  double Rand() { return unit_(gen_); }  // numpy's random.rand(): U[0, 1)
  double Normal() { return normal_(gen_); }
  // dm_control's randomizers.randomize_limited_and_rotational_joints: limited hinges/slides uniform in their range,
  // limited balls a random quaternion within the limit, unlimited hinges U(-pi, pi), unlimited balls a uniform
  // unit quaternion, free joints a normalised U[0, 1)^4 quaternion (dm_control's choice), positions untouched.
  void RandomizeLimitedAndRotationalJoints();

  // Observation array i of this env's row.
  static double* Obs(Output& out, int i) { return out.Obs<double>(i); }

  ModelPtr model_;  // the shared compiled model
  const mjModel* m_;
  mjData* d_ = nullptr;
  int frame_skip_;

 private:
  void PhysicsStep();
  int PhysicsStateSize() const { return static_cast<int>(m_->nq + m_->nv + m_->na); }

  mjModel* own_ = nullptr;  // own_model: this env's copy (m_ points to it)
  ModelPtr no_actuation_;   // shared model: its twin with actuation disabled, for AfterReset
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::normal_distribution<double> normal_{0.0, 1.0};
};

// The static part of a domain's env type. `Task` (derived from DmcTask<Task>) provides
//   static constexpr const char* kName;
//   static std::vector<ConfigKey> ConfigKeys();                       // DomainKeys(...)
//   static std::vector<ObsDef> Observations(const Config&, const mjModel*);
template <class Task>
class DmcTask : public DmcEnv {
 public:
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineDmcSpec(c, b, Task::Observations(c, m.get()));
  }

 protected:
  using DmcEnv::DmcEnv;
};

// Observation writers: copy n values to o; return the next write position.
inline double* Put(double* o, const double* src, int n) {
  std::memcpy(o, src, sizeof(double) * static_cast<size_t>(n));
  return o + n;
}

// np.linalg.norm of n values: the square root of their sum of squares.
inline double Norm(const double* v, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += v[i] * v[i];
  return std::sqrt(s);
}

// The task_name of a config, checked against the domain's tasks: its index in `tasks`.
int TaskIndex(const Config& c, const std::vector<DomainTask>& tasks);

// Registers every task of domain E (E::Tasks()): its id, task_name and, where the task has one, its model builder.
template <typename E>
bool RegisterDomain() {
  std::vector<TaskDef> defs;
  for (const DomainTask& t : E::Tasks()) {
    TaskDef d{t.id, {{"task_name", t.name}}};
    if (!t.model.empty()) d.overrides["xml_file"] = t.model;
    defs.push_back(std::move(d));
  }
  return RegisterEnv<E>(defs);
}

}  // namespace pp::mujoco_dmc

#define PP_REGISTER_DMC_DOMAIN(EnvClass) \
  static const bool PP_CONCAT(pp_registered_, __LINE__) = ::pp::mujoco_dmc::RegisterDomain<EnvClass>()
