// QuadrupedWalk-v1, QuadrupedRun-v1, QuadrupedEscape-v1 and QuadrupedFetch-v1, aligned with dm_control 1.0.50's
// suite/quadruped.py. The model is quadruped.xml with dm_control's edits per task: the floor size (walk, run,
// escape), no walls/ball/target (all but fetch), no terrain and no rangefinders (all but escape).
//
// Observation keys are EnvPool's, the same for every task: the keys dm_control's task does not have are zeros
// (rangefinder unless escape; ball_state and target_position unless fetch), except `origin`, which EnvPool fills
// for every task.
//
// Task state outside the physics state: escape's terrain, a random smooth heightfield dm_control writes into the
// model on every reset (per env here: each env owns its model copy).
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/envs/mujoco_dmc/dmc_env.h"
#include "core/envs/mujoco_dmc/manipulation_common.h"

namespace pp::mujoco_dmc {

// scipy.ndimage.zoom(x, out / in) of a length-`in` signal to length `out` (order 3, mode 'constant', no grid
// mode), as the (out x in) matrix Z with zoom(x) = Z x. zoom is linear and separable, so a 2-D zoom is Z X Z^T.
// scipy: a cubic B-spline prefilter with mirror boundaries, then the spline sampled at i * (in - 1) / (out - 1),
// its coefficients mirror-extended near the edges.
inline std::vector<double> CubicZoomMatrix(int in, int out) {
  const double pole = std::sqrt(3.0) - 2;
  const int period = 2 * in - 2;
  auto mirror = [&](int i) {
    i = std::abs(i) % period;
    return i < in ? i : period - i;
  };
  auto bspline = [](double t) {
    t = std::abs(t);
    return t < 1 ? 2.0 / 3 - t * t + t * t * t / 2 : t < 2 ? (2 - t) * (2 - t) * (2 - t) / 6 : 0.0;
  };
  std::vector<double> z(static_cast<size_t>(out) * in, 0.0);
  std::vector<double> c(in);
  for (int j = 0; j < in; ++j) {
    // the prefiltered unit impulse e_j (gain 6, causal then anti-causal pass, mirror-symmetric initialisation)
    for (int k = 0; k < in; ++k) c[k] = k == j ? 6.0 : 0.0;
    double sum = 0, zk = 1;
    for (int k = 0; k < period; ++k, zk *= pole) sum += zk * c[mirror(k)];
    c[0] = sum / (1 - zk);
    for (int k = 1; k < in; ++k) c[k] += pole * c[k - 1];
    c[in - 1] = pole / (pole * pole - 1) * (c[in - 1] + pole * c[in - 2]);
    for (int k = in - 2; k >= 0; --k) c[k] = pole * (c[k + 1] - c[k]);
    for (int o = 0; o < out; ++o) {
      const double x = o * static_cast<double>(in - 1) / (out - 1);
      const int first = static_cast<int>(std::floor(x)) - 1;
      double v = 0;
      for (int k = first; k < first + 4; ++k) v += c[mirror(k)] * bspline(x - k);
      z[static_cast<size_t>(o) * in + j] = v;
    }
  }
  return z;
}

class QuadrupedEnv : public DmcTask<QuadrupedEnv> {
 public:
  static constexpr const char* kName = "DmcQuadruped";
  static const std::vector<DomainTask>& Tasks() {
    static const std::vector<DomainTask> t = {
        {"walk", "QuadrupedWalk-v1", "dm_control:suite.quadruped.make_model(floor_size=10)"},
        {"run", "QuadrupedRun-v1", "dm_control:suite.quadruped.make_model(floor_size=100)"},
        {"escape", "QuadrupedEscape-v1",
         "dm_control:suite.quadruped.make_model(floor_size=40, terrain=True, rangefinders=True)"},
        {"fetch", "QuadrupedFetch-v1", "dm_control:suite.quadruped.make_model(walls_and_ball=True)"},
    };
    return t;
  }
  // control_timestep 0.02 s of 0.005 s physics steps; each task id selects its model builder's arguments
  static std::vector<ConfigKey> ConfigKeys() {
    return DomainKeys("dm_control:suite.quadruped.make_model(floor_size=10)", 4, Tasks());
  }
  static std::vector<ObsDef> Observations(const Config&, const mjModel*) {
    return {{"egocentric_state", {44}},
            {"torso_velocity", {3}},
            {"torso_upright", {}},
            {"imu", {6}},
            {"force_torque", {24}},
            {"origin", {3}},
            {"rangefinder", {kRangefinders}},
            {"ball_state", {9}},
            {"target_position", {3}}};
  }

  QuadrupedEnv(const Config& c, int env_id, uint64_t seed)
      : DmcTask(c, env_id, seed, KindOf(c) == Kind::kEscape),  // escape's terrain changes per episode
        kind_(KindOf(c)),
        torso_(BodyId("torso")),
        root_(JointId("root")),
        workspace_(SiteId("workspace")),
        floor_(GeomId("floor")),
        velocimeter_(static_cast<int>(m_->sensor_adr[SensorId("velocimeter")])) {
    for (int j = 0; j < m_->njnt; ++j) {
      if (m_->jnt_type[j] == mjJNT_HINGE) hinges_.push_back(j);
    }
    for (int s = 0; s < m_->nsensor; ++s) {
      const int t = m_->sensor_type[s];
      if (t == mjSENS_GYRO || t == mjSENS_ACCELEROMETER) imu_.push_back(s);
      if (t == mjSENS_FORCE || t == mjSENS_TORQUE) force_torque_.push_back(s);
    }
    if (2 * static_cast<int>(hinges_.size()) + m_->na != 44 || imu_.size() != 2 || force_torque_.size() != 8) {
      throw std::invalid_argument("quadruped.xml does not have the joints, actuators and sensors dm_control uses");
    }
    if (kind_ == Kind::kEscape) {
      for (int i = 0; i < kRangefinders; ++i)
        rangefinders_[i] = static_cast<int>(m_->sensor_adr[SensorId(RangefinderName(i).c_str())]);
    }
    if (kind_ == Kind::kFetch) {
      ball_ = BodyId("ball");
      ball_root_ = JointId("ball_root");
      ball_geom_ = GeomId("ball");
      target_ = SiteId("target");
    }
  }

 protected:
  // Escape's terrain heights, row by row: the task state dm_control keeps in the model (hfield_data).
  int TaskStateSize() const override { return kind_ == Kind::kEscape ? TerrainSize() : 0; }
  void GetTaskState(double* s) const override {
    const float* h = m_->hfield_data + m_->hfield_adr[0];
    for (int i = 0; i < TaskStateSize(); ++i) s[i] = h[i];
  }
  void SetTaskState(const double* s) override {
    if (TaskStateSize() == 0) return;  // only Escape has a terrain (and a model of its own to change)
    float* h = Terrain();
    for (int i = 0; i < TaskStateSize(); ++i) h[i] = static_cast<float>(s[i]);
  }

  void InitializeEpisode() override {
    switch (kind_) {
      case Kind::kWalk:
      case Kind::kRun: FindNonContactingHeight(RandomOrientation(), 0, 0); break;
      case Kind::kEscape:
        MakeTerrain();
        FindNonContactingHeight(RandomOrientation(), 0, 0);
        break;
      case Kind::kFetch: InitializeFetch(); break;
    }
  }

  void WriteObservation(Output& out) override {
    const double* torso_frame = d_->xmat + 9 * torso_;
    const double* torso_pos = d_->xpos + 3 * torso_;
    double* ego = out.Obs<double>(0);
    for (int j : hinges_) *ego++ = d_->qpos[m_->jnt_qposadr[j]];
    for (int j : hinges_) *ego++ = d_->qvel[m_->jnt_dofadr[j]];
    for (int i = 0; i < m_->na; ++i) *ego++ = d_->act[i];
    Put(Obs(out, 1), d_->sensordata + velocimeter_, 3);
    *out.Obs<double>(2) = torso_frame[8];
    PutSensors(imu_, out.Obs<double>(3), false);
    PutSensors(force_torque_, out.Obs<double>(4), true);
    const double minus_torso[3] = {-torso_pos[0], -torso_pos[1], -torso_pos[2]};
    InFrame(torso_frame, minus_torso, out.Obs<double>(5));
    double* rf = out.Obs<double>(6);
    for (int i = 0; i < kRangefinders; ++i) {
      // dm_control: -1 (no intersection) reads as 1, other distances squashed by tanh
      rf[i] = kind_ != Kind::kEscape                     ? 0.0
              : d_->sensordata[rangefinders_[i]] == -1.0 ? 1.0
                                                         : std::tanh(d_->sensordata[rangefinders_[i]]);
    }
    WriteBallObs(out);
  }

  double Reward() override {
    switch (kind_) {
      case Kind::kWalk:
      case Kind::kRun: {
        const double speed = kind_ == Kind::kWalk ? kWalkSpeed : kRunSpeed;
        const double move = Tolerance(d_->sensordata[velocimeter_], speed, kInf, speed, Sigmoid::kLinear, 0.5);
        return UprightReward(0) * move;
      }
      case Kind::kEscape: {
        const double terrain_size = m_->hfield_size[0];
        const double* w = d_->site_xpos + 3 * workspace_;
        const double origin_distance = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
        const double escape = Tolerance(origin_distance, terrain_size, kInf, terrain_size, Sigmoid::kLinear, 0.0);
        return UprightReward(20) * escape;
      }
      case Kind::kFetch: return FetchReward();
    }
    return 0.0;
  }

 private:
  enum class Kind { kWalk, kRun, kEscape, kFetch };
  static constexpr int kRangefinders = 20;
  static constexpr double kWalkSpeed = 0.5, kRunSpeed = 5;  // m/s above which the move reward is 1
  static constexpr double kTerrainSmoothness = 0.15;        // 0: maximally bumpy; 1: completely smooth
  static constexpr double kTerrainBumpScale = 2;            // metres between bumps

  static Kind KindOf(const Config& c) { return static_cast<Kind>(TaskIndex(c, Tasks())); }  // Tasks()' order
  // rf_00 .. rf_34: four rows of five
  static std::string RangefinderName(int i) { return "rf_" + std::to_string(i / 5) + std::to_string(i % 5); }

  // A uniformly random orientation: normalised N(0, 1)^4.
  std::array<double, 4> RandomOrientation() {
    std::array<double, 4> q;
    for (double& x : q) x = Normal();
    const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    for (double& x : q) x /= n;
    return q;
  }

  // dm_control's _find_non_contacting_height: from z = 0 (in the floor) upwards in 1 cm steps until nothing
  // touches, each try from a freshly reset state.
  void FindNonContactingHeight(const std::array<double, 4>& orientation, double x, double y) {
    double* root = d_->qpos + m_->jnt_qposadr[root_];
    double z = 0.0;
    for (int attempt = 1;; ++attempt) {
      mj_resetData(m_, d_);
      root[0] = x;
      root[1] = y;
      root[2] = z;
      for (int i = 0; i < 4; ++i) root[3 + i] = orientation[i];
      AfterReset();
      if (d_->ncon == 0) return;
      z += 0.01;
      if (attempt > 10000) throw std::runtime_error("quadruped: failed to find a non-contacting configuration");
    }
  }

  // Escape's terrain: a sinusoidal bowl times smooth random bumps (uniform bumps on a coarse grid, zoomed to the
  // heightfield's resolution by scipy's cubic spline).
  void MakeTerrain() {
    const int res = static_cast<int>(m_->hfield_nrow[0]);
    if (res != m_->hfield_ncol[0]) throw std::invalid_argument("quadruped: the terrain heightfield is not square");
    const int bump_res = static_cast<int>(2 * m_->hfield_size[0] / kTerrainBumpScale);
    static const std::vector<double> zoom = CubicZoomMatrix(bump_res, res);  // the same for every env
    if (zoom.size() != static_cast<size_t>(res) * bump_res) throw std::logic_error("quadruped: terrain size");
    std::vector<double> bumps(static_cast<size_t>(bump_res) * bump_res);
    for (double& b : bumps) b = Uniform(kTerrainSmoothness, 1);
    // smooth = Z bumps Z^T
    std::vector<double> half(static_cast<size_t>(res) * bump_res, 0.0);  // Z bumps
    for (int r = 0; r < res; ++r) {
      for (int k = 0; k < bump_res; ++k) {
        const double w = zoom[r * bump_res + k];
        for (int c = 0; c < bump_res; ++c) half[r * bump_res + c] += w * bumps[k * bump_res + c];
      }
    }
    float* h = Terrain();
    for (int r = 0; r < res; ++r) {
      for (int c = 0; c < res; ++c) {
        double smooth = 0;
        for (int k = 0; k < bump_res; ++k) smooth += half[r * bump_res + k] * zoom[c * bump_res + k];
        // the bowl: np.ogrid[-1:1:res*1j] coordinates, radius clipped to [.04, 1]
        const double row = -1 + 2.0 * r / (res - 1), col = -1 + 2.0 * c / (res - 1);
        const double radius = std::min(std::max(std::sqrt(col * col + row * row), .04), 1.0);
        const double bowl = .5 - std::cos(2 * mjPI * radius) / 2;
        h[r * res + c] = static_cast<float>(bowl * smooth);
      }
    }
  }

  float* Terrain() { return MutableModel()->hfield_data + m_->hfield_adr[0]; }
  int TerrainSize() const { return static_cast<int>(m_->hfield_nrow[0] * m_->hfield_ncol[0]); }

  // Fetch: the quadruped at a random azimuth and place, the ball thrown in from a random place.
  void InitializeFetch() {
    const double azimuth = Uniform(0, 2 * mjPI);
    const std::array<double, 4> orientation = {std::cos(azimuth / 2), 0, 0, std::sin(azimuth / 2)};
    const double spawn_radius = 0.9 * m_->geom_size[3 * floor_];
    const double x = Uniform(-spawn_radius, spawn_radius);
    const double y = Uniform(-spawn_radius, spawn_radius);
    FindNonContactingHeight(orientation, x, y);
    double* ball_qpos = d_->qpos + m_->jnt_qposadr[ball_root_];
    double* ball_qvel = d_->qvel + m_->jnt_dofadr[ball_root_];
    ball_qpos[0] = Uniform(-spawn_radius, spawn_radius);
    ball_qpos[1] = Uniform(-spawn_radius, spawn_radius);
    ball_qpos[2] = 2;
    ball_qvel[0] = 5 * Normal();
    ball_qvel[1] = 5 * Normal();
  }

  // The readings of `sensors` (3 values each), arcsinh-scaled if `scaled`.
  void PutSensors(const std::vector<int>& sensors, double* o, bool scaled) const {
    for (int s : sensors) {
      const double* v = d_->sensordata + m_->sensor_adr[s];
      for (int i = 0; i < 3; ++i) *o++ = scaled ? std::asinh(v[i]) : v[i];
    }
  }

  // ball_state (the ball's position, velocity and angular velocity relative to the torso, in its frame) and
  // target_position (in the torso frame); zeros without a ball.
  void WriteBallObs(Output& out) const {
    double* ball = out.Obs<double>(7);
    double* target = out.Obs<double>(8);
    if (kind_ != Kind::kFetch) {
      std::fill(ball, ball + 9, 0.0);
      std::fill(target, target + 3, 0.0);
      return;
    }
    const double* torso_frame = d_->xmat + 9 * torso_;
    const double* torso_pos = d_->xpos + 3 * torso_;
    const double* ball_pos = d_->xpos + 3 * ball_;
    const double* ball_vel = d_->qvel + m_->jnt_dofadr[ball_root_];
    const double* root_vel = d_->qvel + m_->jnt_dofadr[root_];
    const double* target_pos = d_->site_xpos + 3 * target_;
    double rel_pos[3], rel_vel[3], to_target[3];
    for (int i = 0; i < 3; ++i) {
      rel_pos[i] = ball_pos[i] - torso_pos[i];
      rel_vel[i] = ball_vel[i] - root_vel[i];
      to_target[i] = target_pos[i] - torso_pos[i];
    }
    InFrame(torso_frame, rel_pos, ball);
    InFrame(torso_frame, rel_vel, ball + 3);
    InFrame(torso_frame, ball_vel + 3, ball + 6);
    InFrame(torso_frame, to_target, target);
  }

  // 1 when the torso's z axis is within `deviation_deg` of the world's, falling linearly to 0 upside down.
  double UprightReward(double deviation_deg) const {
    const double deviation = std::cos(deviation_deg * mjPI / 180);
    return Tolerance(d_->xmat[9 * torso_ + 8], deviation, kInf, 1 + deviation, Sigmoid::kLinear, 0.0);
  }

  static double Norm2(double x, double y) { return std::sqrt(x * x + y * y); }  // as numpy's norm (no hypot)

  double FetchReward() const {
    const double arena_radius = m_->geom_size[3 * floor_] * std::sqrt(2.0);
    const double workspace_radius = m_->site_size[3 * workspace_];
    const double ball_radius = m_->geom_size[3 * ball_geom_];
    const double target_radius = m_->site_size[3 * target_];
    const double* ball = d_->xpos + 3 * ball_;
    const double* w = d_->site_xpos + 3 * workspace_;
    const double* t = d_->site_xpos + 3 * target_;
    const double self_to_ball = Norm2(w[0] - ball[0], w[1] - ball[1]);
    const double ball_to_target = Norm2(t[0] - ball[0], t[1] - ball[1]);
    const double reach = Tolerance(self_to_ball, 0, workspace_radius + ball_radius, arena_radius, Sigmoid::kLinear, 0);
    const double fetch = Tolerance(ball_to_target, 0, target_radius, arena_radius, Sigmoid::kLinear, 0);
    return UprightReward(0) * reach * (0.5 + 0.5 * fetch);
  }

  Kind kind_;
  int torso_, root_, workspace_, floor_, velocimeter_;
  int ball_ = -1, ball_root_ = -1, ball_geom_ = -1, target_ = -1;
  std::vector<int> hinges_, imu_, force_torque_;
  std::array<int, kRangefinders> rangefinders_{};
};

}  // namespace pp::mujoco_dmc
