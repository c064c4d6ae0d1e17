// Shared code of the MuJoCo (gymnasium suite) family: model loading and caching, the base env (stepping,
// reset noise, qpos/qvel state, frame stacking), common config keys and observation/info helpers.
// Each task header (ant.h, hopper.h, ...) only adds its own reward terms, termination rule and observation.
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
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/pool/env.h"
#include "core/pool/registry.h"
#include "core/pool/spec.h"

namespace pp::mujoco_gym {

using ModelPtr = std::shared_ptr<const mjModel>;

// The model file of a config: `xml_file` as gymnasium resolves it (absolute or starting with '.': as given;
// '~': home-relative; otherwise relative to `base_path`, which defaults to gymnasium's assets directory).
std::string ModelPath(const Config& c);
// Load (and compile) a model once per process; later calls with the same file share the compiled model,
// which MuJoCo never writes while simulating. Thread-safe. Throws std::invalid_argument with MuJoCo's message.
ModelPtr LoadModel(const std::string& path);
inline ModelPtr LoadModel(const Config& c) { return LoadModel(ModelPath(c)); }

// Config keys every task of the family has (EnvPool's names and defaults).
std::vector<ConfigKey> BaseKeys(const char* xml_file, int frame_skip, int max_episode_steps, double reward_threshold);

// Model sizes as int (mjModel stores them as int64 mjtSize).
struct Dims {
  int nq, nv, nu, nbody, ntendon;
  explicit Dims(const mjModel* m)
      : nq(static_cast<int>(m->nq)), nv(static_cast<int>(m->nv)), nu(static_cast<int>(m->nu)),
        nbody(static_cast<int>(m->nbody)), ntendon(static_cast<int>(m->ntendon)) {}
};

inline int BodyId(const mjModel* m, const char* name) {
  int id = mj_name2id(m, mjOBJ_BODY, name);
  if (id < 0) throw std::invalid_argument(std::string("the MuJoCo model has no body named '") + name + "'");
  return id;
}

// Declares the float64 observation (frame-stacked if frame_stack > 1), the float64 action box from the
// actuators' ctrlrange, float64 reward, and the scalar float64 info fields `info`.
void DefineCommonSpec(const Config& c, SpecBuilder& b, const mjModel* m, int obs_dim,
                      const std::vector<const char*>& info);

// Scalar float64 info fields, addressed by a per-task enum. The task lists the names it declares (they may
// differ between -v4 and -v5); fields it did not declare are not written.
template <size_t N>
class InfoFields {
 public:
  InfoFields(const std::array<const char*, N>& all, const std::vector<const char*>& declared) {
    slot_.fill(-1);
    for (size_t f = 0; f < N; ++f) {
      for (size_t j = 0; j < declared.size(); ++j) {
        if (std::strcmp(all[f], declared[j]) == 0) slot_[f] = static_cast<int>(j);
      }
    }
  }
  void Set(Output& out, size_t field, double v) const {
    if (slot_[field] >= 0) *out.Info<double>(slot_[field]) = v;
  }
  int slot(size_t field) const { return slot_[field]; }

 private:
  std::array<int, N> slot_;
};

class MujocoEnv : public Env {
 public:
  MujocoEnv(const Config& c, int env_id, uint64_t seed);
  ~MujocoEnv() override;

  // qpos then qvel. SetState is gymnasium's set_state: copy them in and run mj_forward.
  std::vector<double> GetState() const override;
  void SetState(const std::vector<double>& state) override;

 protected:
  // ctrl = action, frame_skip x mj_step, then mj_rnePostConstraint if `post_constraint` is on and the task
  // reads cfrc_ext (need_cfrc).
  void Simulate(const double* action, bool need_cfrc) {
    std::memcpy(d_->ctrl, action, sizeof(double) * static_cast<size_t>(n_.nu));
    for (int i = 0; i < frame_skip_; ++i) mj_step(m_, d_);
    if (need_cfrc && post_constraint_) mj_rnePostConstraint(m_, d_);
  }
  // mj_resetData; the task then writes qpos/qvel (init + noise) and calls Forward().
  void ResetData() {
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

}  // namespace pp::mujoco_gym
