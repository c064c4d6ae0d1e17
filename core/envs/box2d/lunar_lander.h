// LunarLander-v2/v3 and LunarLanderContinuous-v2/v3, aligned with gymnasium 1.4's
// gymnasium.envs.box2d.lunar_lander.LunarLander (v3 rules for every id: EnvPool registers its one env under both
// versions, gymnasium 1.4 only v3).
//
// The same Box2D 2.3 C++ source as pybox2d (family.cmake) does the physics; this file does what gymnasium's Python
// does around it, in the same order and precision: Python floats (double) wherever gymnasium computes, rounded to
// float32 where pybox2d hands a value to Box2D (b2Vec2, angles, forces), and Box2D's float32 values widened back
// to double where gymnasium reads them. gymnasium's random draws (terrain, initial push, wind offsets, engine
// dispersion) come from NumpyGenerator, numpy's PCG64 generator, so from the same generator state both envs make the
// same draws. Particles only exist in gymnasium when rendering (they do not touch the lander), so none here.
//
// State (GetState/SetState, snapshots): the generator state the episode started from, then the actions stepped
// since (1 value each, or 2 for the continuous env). SetState rebuilds the episode from that generator state, as
// gymnasium's reset does from np_random in it, and replays the actions (ActionLog, replay.h).
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/box2d/pybox2d.h"
#include "core/envs/box2d/replay.h"
#include "core/envs/common/numpy_random.h"

namespace pp::box2d {

class LunarLanderEnv : public Env {
 public:
  static constexpr const char* kName = "LunarLander";

  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{1000}, "truncate after this many steps", {}},
            {"reward_threshold", 200.0, "solved score", {}},
            {"continuous", false, "Box(-1, 1, (2,)) throttles (main, lateral) instead of Discrete(4)", {}},
            {"gravity", -10.0, "gravity along y, in (-12, 0)", {}},
            {"enable_wind", false, "push the flying lander with wind and turbulence", {}},
            {"wind_power", 15.0, "largest wind force (recommended [0, 20])", {}},
            {"turbulence_power", 1.5, "largest turbulence torque (recommended [0, 2])", {}}};
  }

  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const double g = c.Get<double>("gravity");
    if (!(g > -12.0 && g < 0.0)) {
      throw std::invalid_argument("LunarLander: gravity must be in (-12, 0), got " + std::to_string(g));
    }
    // gymnasium's observation bounds (position, velocity, angle, angular velocity, leg contacts); EnvPool 1.2.5
    // declares float32's min/max instead (low is the smallest positive float, which no observation fits), and only
    // its face shows those (docs/decisions.md, "Box2D")
    const int obs = b.Obs("obs", DType::kFloat32, {8}, {-2.5, -2.5, -10.0, -10.0, -2 * M_PI, -10.0, 0.0, 0.0},
                          {2.5, 2.5, 10.0, 10.0, 2 * M_PI, 10.0, 1.0, 1.0});
    b.EnvPoolObsBounds(obs, {kFloatMin}, {kFloatMax});
    if (c.Get<bool>("continuous")) {
      b.Action("action", DType::kFloat32, {2}, {-1.0}, {1.0});
    } else {
      b.DiscreteAction(4);
    }
  }

  LunarLanderEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        continuous_(c.Get<bool>("continuous")),
        gravity_(c.Get<double>("gravity")),
        enable_wind_(c.Get<bool>("enable_wind")),
        wind_power_(c.Get<double>("wind_power")),
        turbulence_power_(c.Get<double>("turbulence_power")),
        listener_(this),
        log_(c, "LunarLander", continuous_ ? 2 : 1, continuous_ ? -1 : 3) {}

  void Reset(Output& out) override {
    rng_.SeedFrom(gen_);
    Start();
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    float a[2] = {0.0f, 0.0f};
    if (continuous_) {
      a[0] = action.Get<float>(0)[0];
      a[1] = action.Get<float>(0)[1];
    } else {
      a[0] = static_cast<float>(action.Discrete());  // the engine has checked its range
    }
    Advance(a);
    log_.Add(a);
    out.SetReward(static_cast<float>(reward_));
    out.SetTerminated(terminated_);
    Write(out);
  }

  std::vector<double> GetState() const override { return log_.State(); }

  void SetState(const std::vector<double>& s) override {
    log_.Replay(s, rng_, [this] { Start(); }, [this](const float* a) { Advance(a); });
  }

 private:
  static constexpr double kFloatMin = 1.1754943508222875e-38, kFloatMax = 3.4028234663852886e+38;
  static constexpr double kFps = 50, kScale = 30.0, kMainEnginePower = 13.0, kSideEnginePower = 0.6;
  static constexpr double kInitialRandom = 1000.0, kLegAway = 20, kLegDown = 18, kLegW = 2, kLegH = 8;
  static constexpr double kLegSpringTorque = 40, kSideEngineHeight = 14, kSideEngineAway = 12;
  static constexpr double kMainEngineYLocation = 4, kViewportW = 600, kViewportH = 400;

  // gymnasium's ContactDetector: the lander touching anything ends the game; legs track ground contact.
  friend class ContactRelay<LunarLanderEnv>;
  void Touch(b2Body* a, b2Body* b, bool begin) {
    if (begin && (lander_ == a || lander_ == b)) game_over_ = true;
    for (int i = 0; i < 2; ++i) {
      if (legs_[i] == a || legs_[i] == b) leg_contact_[i] = begin;
    }
  }

  static b2Vec2 V(double x, double y) { return b2Vec2(static_cast<float32>(x), static_cast<float32>(y)); }

  // gymnasium's reset from rng_'s current state (its reset ends with one no-op step, whose draws count too).
  void Start() {
    log_.Start(rng_);
    world_ = std::make_unique<b2World>(V(0, gravity_));
    world_->SetContactListener(&listener_);
    game_over_ = false;
    has_prev_shaping_ = false;
    leg_contact_[0] = leg_contact_[1] = false;
    const double W = kViewportW / kScale, H = kViewportH / kScale;
    constexpr int kChunks = 11;
    double height[kChunks + 1];
    for (double& h : height) h = rng_.Uniform(0, H / 2);
    double chunk_x[kChunks];
    for (int i = 0; i < kChunks; ++i) chunk_x[i] = W / (kChunks - 1) * i;
    helipad_y_ = H / 4;
    for (int i = kChunks / 2 - 2; i <= kChunks / 2 + 2; ++i) height[i] = helipad_y_;
    double smooth_y[kChunks];
    for (int i = 0; i < kChunks; ++i) {  // height[i - 1] at i = 0 is Python's height[-1], the last one
      smooth_y[i] = 0.33 * (height[(i + kChunks) % (kChunks + 1)] + height[i] + height[i + 1]);
    }

    b2BodyDef moon_def;  // a static body at the origin
    b2Body* moon = world_->CreateBody(&moon_def);
    b2EdgeShape edge;
    edge.Set(V(0, 0), V(W, 0));
    b2FixtureDef floor;  // pybox2d's default fixture def
    floor.shape = &edge;
    moon->CreateFixture(&floor);
    for (int i = 0; i < kChunks - 1; ++i) {
      edge.Set(V(chunk_x[i], smooth_y[i]), V(chunk_x[i + 1], smooth_y[i + 1]));
      b2FixtureDef f;
      f.shape = &edge;
      f.density = 0;
      f.friction = 0.1f;
      moon->CreateFixture(&f);
    }

    const double initial_y = kViewportH / kScale, initial_x = kViewportW / kScale / 2;
    b2BodyDef lander_def;
    lander_def.type = b2_dynamicBody;
    lander_def.position = V(initial_x, initial_y);
    lander_def.angle = 0.0f;
    lander_ = world_->CreateBody(&lander_def);
    static constexpr double kPoly[6][2] = {{-14, +17}, {-17, 0}, {-17, -10}, {+17, -10}, {+17, 0}, {+14, +17}};
    b2Vec2 verts[6];
    for (int i = 0; i < 6; ++i) verts[i] = V(kPoly[i][0] / kScale, kPoly[i][1] / kScale);
    b2PolygonShape body_shape;
    body_shape.Set(verts, 6);
    b2FixtureDef body_fix;
    body_fix.shape = &body_shape;
    body_fix.density = 5.0f;
    body_fix.friction = 0.1f;
    body_fix.filter.categoryBits = 0x0010;
    body_fix.filter.maskBits = 0x001;
    body_fix.restitution = 0.0f;
    lander_->CreateFixture(&body_fix);
    const double fx = rng_.Uniform(-kInitialRandom, kInitialRandom);
    const double fy = rng_.Uniform(-kInitialRandom, kInitialRandom);
    lander_->ApplyForceToCenter(V(fx, fy), true);
    if (enable_wind_) {
      wind_idx_ = rng_.Integers(-9999, 9999);
      torque_idx_ = rng_.Integers(-9999, 9999);
    }

    for (int k = 0; k < 2; ++k) {
      const int i = k == 0 ? -1 : +1;
      b2BodyDef leg_def;
      leg_def.type = b2_dynamicBody;
      leg_def.position = V(initial_x - i * kLegAway / kScale, initial_y);
      leg_def.angle = static_cast<float32>(i * 0.05);
      legs_[k] = world_->CreateBody(&leg_def);
      b2PolygonShape leg_shape;
      leg_shape.SetAsBox(static_cast<float32>(kLegW / kScale), static_cast<float32>(kLegH / kScale));
      b2FixtureDef leg_fix;
      leg_fix.shape = &leg_shape;
      leg_fix.density = 1.0f;
      leg_fix.restitution = 0.0f;
      leg_fix.filter.categoryBits = 0x0020;
      leg_fix.filter.maskBits = 0x001;
      legs_[k]->CreateFixture(&leg_fix);
      b2RevoluteJointDef rjd;
      rjd.bodyA = lander_;
      rjd.bodyB = legs_[k];
      rjd.referenceAngle = PyboxReferenceAngle(lander_, legs_[k]);
      rjd.localAnchorA = V(0, 0);
      rjd.localAnchorB = V(i * kLegAway / kScale, kLegDown / kScale);
      rjd.enableMotor = true;
      rjd.enableLimit = true;
      rjd.maxMotorTorque = static_cast<float32>(kLegSpringTorque);
      rjd.motorSpeed = static_cast<float32>(+0.3 * i);
      if (i == -1) {
        rjd.lowerAngle = static_cast<float32>(+0.9 - 0.5);
        rjd.upperAngle = static_cast<float32>(+0.9);
      } else {
        rjd.lowerAngle = static_cast<float32>(-0.9);
        rjd.upperAngle = static_cast<float32>(-0.9 + 0.5);
      }
      world_->CreateJoint(&rjd);
    }
    const float noop[2] = {0.0f, 0.0f};
    Advance(noop);
  }

  // gymnasium's step, without the outputs: a[0] is the discrete action, or a[0], a[1] the throttles.
  void Advance(const float* a) {
    if (enable_wind_ && !(leg_contact_[0] || leg_contact_[1])) {
      const double wind_mag = std::tanh(std::sin(0.02 * static_cast<double>(wind_idx_)) +
                                        std::sin(M_PI * 0.01 * static_cast<double>(wind_idx_))) *
                              wind_power_;
      wind_idx_ += 1;
      lander_->ApplyForceToCenter(V(wind_mag, 0.0), true);
      const double torque_mag = std::tanh(std::sin(0.02 * static_cast<double>(torque_idx_)) +
                                          std::sin(M_PI * 0.01 * static_cast<double>(torque_idx_))) *
                                turbulence_power_;
      torque_idx_ += 1;
      lander_->ApplyTorque(static_cast<float32>(torque_mag), true);
    }
    // np.clip(action, -1, 1) in float32, then float64
    const double a0 = continuous_ ? static_cast<double>(std::clamp(a[0], -1.0f, 1.0f)) : 0.0;
    const double a1 = continuous_ ? static_cast<double>(std::clamp(a[1], -1.0f, 1.0f)) : 0.0;
    const int discrete = continuous_ ? 0 : static_cast<int>(a[0]);

    const double angle = lander_->GetAngle();
    const double tip[2] = {std::sin(angle), std::cos(angle)};
    const double side[2] = {-tip[1], tip[0]};
    double dispersion[2];
    for (double& d : dispersion) d = rng_.Uniform(-1.0, +1.0) / kScale;

    double m_power = 0.0;
    if ((continuous_ && a0 > 0.0) || (!continuous_ && discrete == 2)) {
      m_power = continuous_ ? (std::clamp(a0, 0.0, 1.0) + 1.0) * 0.5 : 1.0;
      const double ox = tip[0] * (kMainEngineYLocation / kScale + 2 * dispersion[0]) + side[0] * dispersion[1];
      const double oy = -tip[1] * (kMainEngineYLocation / kScale + 2 * dispersion[0]) - side[1] * dispersion[1];
      const b2Vec2 pos = lander_->GetPosition();
      const double px = static_cast<double>(pos.x) + ox, py = static_cast<double>(pos.y) + oy;
      lander_->ApplyLinearImpulse(V(-ox * kMainEnginePower * m_power, -oy * kMainEnginePower * m_power), V(px, py),
                                  true);
    }
    double s_power = 0.0;
    if ((continuous_ && std::abs(a1) > 0.5) || (!continuous_ && (discrete == 1 || discrete == 3))) {
      double direction;
      if (continuous_) {
        direction = a1 > 0 ? 1.0 : -1.0;  // np.sign (a1 is not 0 here)
        s_power = std::clamp(std::abs(a1), 0.5, 1.0);
      } else {
        direction = discrete - 2;
        s_power = 1.0;
      }
      const double ox = tip[0] * dispersion[0] + side[0] * (3 * dispersion[1] + direction * kSideEngineAway / kScale);
      const double oy = -tip[1] * dispersion[0] - side[1] * (3 * dispersion[1] + direction * kSideEngineAway / kScale);
      const b2Vec2 pos = lander_->GetPosition();
      const double px = static_cast<double>(pos.x) + ox - tip[0] * 17 / kScale;
      const double py = static_cast<double>(pos.y) + oy + tip[1] * kSideEngineHeight / kScale;
      lander_->ApplyLinearImpulse(V(-ox * kSideEnginePower * s_power, -oy * kSideEnginePower * s_power), V(px, py),
                                  true);
    }

    world_->Step(static_cast<float32>(1.0 / kFps), 6 * 30, 2 * 30);

    const b2Vec2 pos = lander_->GetPosition();
    const b2Vec2 vel = lander_->GetLinearVelocity();
    const double W2 = kViewportW / kScale / 2, H2 = kViewportH / kScale / 2;
    state_[0] = (static_cast<double>(pos.x) - W2) / W2;
    state_[1] = (static_cast<double>(pos.y) - (helipad_y_ + kLegDown / kScale)) / H2;
    state_[2] = static_cast<double>(vel.x) * W2 / kFps;
    state_[3] = static_cast<double>(vel.y) * H2 / kFps;
    state_[4] = lander_->GetAngle();
    state_[5] = 20.0 * static_cast<double>(lander_->GetAngularVelocity()) / kFps;
    state_[6] = leg_contact_[0] ? 1.0 : 0.0;
    state_[7] = leg_contact_[1] ? 1.0 : 0.0;

    double reward = 0;
    const double shaping = -100 * std::sqrt(state_[0] * state_[0] + state_[1] * state_[1]) -
                           100 * std::sqrt(state_[2] * state_[2] + state_[3] * state_[3]) - 100 * std::abs(state_[4]) +
                           10 * state_[6] + 10 * state_[7];
    if (has_prev_shaping_) reward = shaping - prev_shaping_;
    prev_shaping_ = shaping;
    has_prev_shaping_ = true;
    reward -= m_power * 0.30;
    reward -= s_power * 0.03;
    terminated_ = false;
    if (game_over_ || std::abs(state_[0]) >= 1.0) {
      terminated_ = true;
      reward = -100;
    }
    if (!lander_->IsAwake()) {
      terminated_ = true;
      reward = +100;
    }
    reward_ = reward;
  }

  void Write(Output& out) {
    float* obs = out.Obs<float>(0);
    for (int i = 0; i < 8; ++i) obs[i] = static_cast<float>(state_[i]);
  }

  const bool continuous_;
  const double gravity_;
  const bool enable_wind_;
  const double wind_power_, turbulence_power_;
  ContactRelay<LunarLanderEnv> listener_;
  NumpyGenerator rng_;
  ActionLog log_;  // the episode's start and actions (GetState)
  std::unique_ptr<b2World> world_;
  b2Body* lander_ = nullptr;
  b2Body* legs_[2] = {nullptr, nullptr};
  bool leg_contact_[2] = {false, false};
  bool game_over_ = false, has_prev_shaping_ = false, terminated_ = false;
  double helipad_y_ = 0, prev_shaping_ = 0, reward_ = 0;
  int64_t wind_idx_ = 0, torque_idx_ = 0;
  double state_[8] = {};
};

}  // namespace pp::box2d
