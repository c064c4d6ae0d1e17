// Shared code of the MuJoCo (gymnasium suite) family: model loading and caching, the base env (stepping,
// reset noise, qpos/qvel state, frame stacking), the shared config keys and their values, the info fields, and
// MujocoTask, the base of every task (spec, usual reset, locomotion step). Each task header (ant.h,
// planar_walker.h, ...) only adds its own defaults, observation, reward terms and termination rule.
//
// Behaviour follows gymnasium 1.4's MujocoEnv: a step sets data.ctrl = action (no clipping: MuJoCo clamps
// internally to ctrlrange), runs mj_step `frame_skip` times, then mj_rnePostConstraint (here only when the
// task reads cfrc_ext; it changes nothing else). Reset = mj_resetData, task noise on qpos/qvel, mj_forward.
#pragma once

#include <mujoco/mujoco.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/engine/spec.h"

namespace pp::mujoco_gym {

using ModelPtr = std::shared_ptr<const mjModel>;

// The model file of a config: `xml_file` as gymnasium resolves it (absolute or starting with '.': as given;
// '~': home-relative; otherwise relative to `base_path`, which defaults to gymnasium's assets directory).
std::string ModelPath(const Config& c);
// Load (and compile) a model once per process; later calls with the same file share the compiled model,
// which MuJoCo never writes while simulating. Thread-safe. Throws std::invalid_argument with MuJoCo's message.
ModelPtr LoadModel(const std::string& path);
inline ModelPtr LoadModel(const Config& c) { return LoadModel(ModelPath(c)); }

// Model sizes as int (mjModel stores them as int64 mjtSize).
struct Dims {
  int nq, nv, nu, nbody, ntendon;
  explicit Dims(const mjModel* m)
      : nq(static_cast<int>(m->nq)),
        nv(static_cast<int>(m->nv)),
        nu(static_cast<int>(m->nu)),
        nbody(static_cast<int>(m->nbody)),
        ntendon(static_cast<int>(m->ntendon)) {}
};

inline int BodyId(const mjModel* m, const char* name) {
  int id = mj_name2id(m, mjOBJ_BODY, name);
  if (id < 0) throw std::invalid_argument(std::string("the MuJoCo model has no body named '") + name + "'");
  return id;
}

// ---- config keys
// A task's keys: the family's (model file, frame skip, ... with the task's defaults), then the task's own, then
// `more` (keys a task shares with a sibling, e.g. the Humanoid observation's). `version` (4 or 5) sets the
// defaults EnvPool gives per version (gymnasium_v5_render_camera).
std::vector<ConfigKey> TaskKeys(int version, const char* xml_file, int frame_skip, int max_episode_steps,
                                double reward_threshold, std::initializer_list<ConfigKey> own,
                                const std::vector<ConfigKey>& more = {});
// Keys several tasks share, each with one meaning and one doc (only the default differs between tasks).
ConfigKey ExcludePositionsKey(const char* what);  // what: "x" or "x, y" (the root coordinates dropped)
ConfigKey ForwardWeightKey(double w);
ConfigKey CtrlWeightKey(double w);
ConfigKey ContactWeightKey(double w);
ConfigKey HealthyRewardKey(double r);
ConfigKey TerminateKey();
ConfigKey LegacyHealthyKey(int version);
ConfigKey RewardIfNotTerminatedKey(int version);
ConfigKey RewardAfterStepKey(int version);
ConfigKey ResetNoiseKey(double s, bool normal_qvel);
// A closed range as two float keys <name>_min and <name>_max.
ConfigKey MinKey(const std::string& name, double lo, const std::string& doc);
ConfigKey MaxKey(const std::string& name, double hi, const std::string& doc);
// Reads such a pair.
struct Range {
  double min, max;
};
inline Range ReadRange(const Config& c, const std::string& name) {
  return {c.Get<double>(name + "_min"), c.Get<double>(name + "_max")};
}

// The values of the shared keys a task declares (keys it does not declare read as 0 / false).
struct SharedParams {
  explicit SharedParams(const Config& c);
  bool no_pos, terminate, legacy_healthy, if_not_terminated, after_step;
  double forward_w, ctrl_w, contact_w, healthy_reward, z_min, z_max, noise;
  // gymnasium's healthy reward: paid when healthy, and by v4 also when unhealthy if terminate_when_unhealthy.
  double HealthyReward(bool healthy) const { return (healthy || (legacy_healthy && terminate)) ? healthy_reward : 0.0; }
  double CtrlCost(const double* a, int n) const;
};

// ---- info fields
// Every scalar info field of the family. A task declares the names it reports (gymnasium's order, per version);
// fields it did not declare are not written.
enum Field {
  kXPosition,
  kYPosition,
  kDistanceFromOrigin,
  kZDistanceFromOrigin,
  kXVelocity,
  kYVelocity,
  kRewardForward,
  kRewardRun,
  kRewardFwd,
  kForwardReward,
  kRewardCtrl,
  kRewardContact,
  kRewardSurvive,
  kRewardLinvel,
  kRewardQuadctrl,
  kRewardAlive,
  kRewardImpact,
  kRewardLinup,
  kRewardDist,
  kRewardNear,
  kDistancePenalty,
  kVelocityPenalty,
  kNumFields
};

class InfoFields {
 public:
  explicit InfoFields(const std::vector<const char*>& declared);
  void Set(Output& out, Field f, double v) const {
    if (slot_[f] >= 0) *out.Info<double>(slot_[f]) = v;
  }
  // Several fields at once: {{kRewardForward, forward}, {kRewardCtrl, -ctrl_cost}}.
  void Set(Output& out, std::initializer_list<std::pair<Field, double>> values) const {
    for (const auto& [f, v] : values) Set(out, f, v);
  }
  // x, y and their distance from the origin.
  void SetPlanePosition(Output& out, double x, double y) const {
    Set(out, {{kXPosition, x}, {kYPosition, y}, {kDistanceFromOrigin, std::sqrt(x * x + y * y)}});
  }
  void Clear(Output& out) const {
    for (int f = 0; f < kNumFields; ++f) Set(out, static_cast<Field>(f), 0.0);
  }

 private:
  std::array<int, kNumFields> slot_;
};

// Declares the float64 observation (frame-stacked if frame_stack > 1), the float64 action box from the
// actuators' ctrlrange, float64 reward, and the scalar float64 info fields `info`.
void DefineCommonSpec(const Config& c, SpecBuilder& b, const mjModel* m, int obs_dim,
                      const std::vector<const char*>& info);

class MujocoEnv : public Env {
 public:
  MujocoEnv(const Config& c, int env_id, uint64_t seed);
  ~MujocoEnv() override;

  // qpos then qvel. SetState is gymnasium's set_state: copy them in and run mj_forward.
  std::vector<double> GetState() const override;
  void SetState(const std::vector<double>& state) override;
  // Snapshots. After a step, the values a task reads (body positions, cfrc_ext) are those mj_step computed from the
  // state before its last substep, not from the current one (gymnasium reads them so too); a snapshot therefore
  // keeps that earlier state and a restore replays the last substep, which leaves mjData as the step left it.
  // Layout: [stepped, cfrc, mjSTATE_INTEGRATION state (before the last substep if stepped, else now), frame stack].
  std::vector<double> SaveState() const override;
  void LoadState(const std::vector<double>& state) override;

 protected:
  // ctrl = action, frame_skip x mj_step, then mj_rnePostConstraint if `post_constraint` is on and the task
  // reads cfrc_ext (need_cfrc).
  void Simulate(const double* action, bool need_cfrc) {
    std::memcpy(d_->ctrl, action, sizeof(double) * static_cast<size_t>(n_.nu));
    for (int i = 0; i < frame_skip_; ++i) {
      if (i == frame_skip_ - 1) mj_getState(m_, d_, last_substep_.data(), mjSTATE_INTEGRATION);
      mj_step(m_, d_);
    }
    stepped_ = true;
    cfrc_ = need_cfrc && post_constraint_;
    if (cfrc_) mj_rnePostConstraint(m_, d_);
  }
  // mj_resetData; the task then writes qpos/qvel (init + noise) and calls Forward().
  void ResetData() {
    stepped_ = false;
    mj_resetData(m_, d_);
    normal_.reset();  // no cached variate carries over: a reset depends only on gen_'s state
  }
  void Forward() { mj_forward(m_, d_); }

  double Uniform(double lo, double hi) { return lo + (hi - lo) * unit_(gen_); }
  double Normal() { return normal_(gen_); }
  // gymnasium's most common reset: qpos = qpos0 + U(-s, s); qvel = U(-s, s) or s * N(0, 1).
  void ResetUniformNoise(double scale, bool normal_qvel);

  static double SumSquares(const double* x, int n) {
    double s = 0;
    for (int i = 0; i < n; ++i) s += x[i] * x[i];
    return s;
  }
  bool StateFinite() const {
    for (int i = 0; i < n_.nq; ++i) {
      if (!std::isfinite(d_->qpos[i])) return false;
    }
    for (int i = 0; i < n_.nv; ++i) {
      if (!std::isfinite(d_->qvel[i])) return false;
    }
    return true;
  }

  // Observation: the task writes its newest observation at ObsBegin(out); then calls ObsEnd(out, reset).
  // Without frame stacking that is the output row itself (no copy).
  double* ObsBegin(Output& out) {
    return frame_stack_ == 1 ? out.Obs<double>(0) : stack_.data() + (frame_stack_ - 1) * obs_dim_;
  }
  void ObsEnd(Output& out, bool reset);
  // The task's observation length (one frame); call once in the task's constructor.
  void SetObsDim(int dim) {
    obs_dim_ = dim;
    if (frame_stack_ > 1) stack_.assign(static_cast<size_t>(frame_stack_) * dim, 0.0);
  }

  ModelPtr model_;
  const mjModel* m_;
  Dims n_;
  mjData* d_ = nullptr;
  int frame_skip_;
  bool post_constraint_;
  double dt_;  // timestep * frame_skip

 private:
  int frame_stack_;
  int obs_dim_ = 0;
  std::vector<double> stack_;
  std::vector<mjtNum> last_substep_;     // mjSTATE_INTEGRATION state before the last substep of the last step
  bool stepped_ = false, cfrc_ = false;  // the last change was a step (not a reset/SetState); it ran cfrc
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::normal_distribution<double> normal_{0.0, 1.0};
};

// np.clip(x, lo, hi)
inline double Clip(double x, double lo, double hi) { return std::min(std::max(x, lo), hi); }

// Observation writers: copy n values to o (optionally clipped); return the next write position.
inline double* Put(double* o, const double* src, int n) {
  std::memcpy(o, src, sizeof(double) * static_cast<size_t>(n));
  return o + n;
}
inline double* PutClipped(double* o, const double* src, int n, double lo, double hi) {
  for (int i = 0; i < n; ++i) o[i] = Clip(src[i], lo, hi);
  return o + n;
}

// The part of every task that only differs by the task's observation and info names. `Task` provides
//   static int ObsDim(const Config&, const mjModel*);        // one observation frame's length
//   static std::vector<const char*> InfoNames();              // the info fields it reports (gymnasium's order)
//   void WriteFrame(double* o);                               // writes one observation frame
template <class Task>
class MujocoTask : public MujocoEnv {
 public:
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    ModelPtr m = LoadModel(c);
    DefineCommonSpec(c, b, m.get(), Task::ObsDim(c, m.get()), Task::InfoNames());
  }

 protected:
  // normal_qvel: the task's reset noise on qvel is s * N(0, 1) (else U(-s, s)).
  MujocoTask(const Config& c, int env_id, uint64_t seed, bool normal_qvel)
      : MujocoEnv(c, env_id, seed), p_(c), info_(Task::InfoNames()), normal_qvel_(normal_qvel) {
    SetObsDim(Task::ObsDim(c, m_));
  }
  // gymnasium's usual reset: mj_resetData, qpos0 + noise, mj_forward; the first observation; info fields 0.
  void ResetWithNoise(Output& out) {
    ResetData();
    ResetUniformNoise(p_.noise, normal_qvel_);
    Forward();
    WriteObs(out, true);
    info_.Clear(out);
  }
  void WriteObs(Output& out, bool reset) {
    static_cast<Task*>(this)->WriteFrame(ObsBegin(out));
    ObsEnd(out, reset);
  }
  // The observation's leading qpos: all of it, or without the first `root` coordinates when
  // exclude_current_positions_from_observation.
  double* PutQpos(double* o, int root) const {
    const int skip = p_.no_pos ? root : 0;
    return Put(o, d_->qpos + skip, n_.nq - skip);
  }
  // The locomotion step most tasks share: simulate, tracking a point (x, y) that the simulation moves (qpos[0..1]
  // or a body's xpos); the forward reward is forward_reward_weight * its x velocity.
  struct Motion {
    double x, y, xv, yv, forward, ctrl_cost;
  };
  Motion Locomote(const double* a, const double* xy, bool need_cfrc) {
    const double x0 = xy[0], y0 = xy[1];
    Simulate(a, need_cfrc);
    const double xv = (xy[0] - x0) / dt_, yv = (xy[1] - y0) / dt_;
    return {xy[0], xy[1], xv, yv, p_.forward_w * xv, p_.CtrlCost(a, n_.nu)};
  }

  // Humanoid's contact cost: contact_cost_weight * sum(cfrc_ext^2), clipped to `range`.
  double ClippedContactCost(const Range& range) const {
    return Clip(p_.contact_w * SumSquares(d_->cfrc_ext, 6 * n_.nbody), range.min, range.max);
  }

  SharedParams p_;
  InfoFields info_;

 private:
  bool normal_qvel_;
};

}  // namespace pp::mujoco_gym
