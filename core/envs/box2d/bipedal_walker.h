// BipedalWalker-v3 and BipedalWalkerHardcore-v3, aligned with gymnasium 1.4's
// gymnasium.envs.box2d.bipedal_walker.BipedalWalker (hardcore=False/True).
//
// As in lunar_lander.h: pybox2d's Box2D source does the physics, this file does gymnasium's Python around it in
// the same order and precision, and gymnasium's draws (terrain, clouds, initial push) come from NumpyGenerator. Where
// gymnasium's arithmetic mixes numpy float32 action values with Python floats, numpy 2 computes in float32 (the
// motor torques and the action cost), and so does this file.
//
// One deliberate difference: every episode runs in a new b2World. gymnasium keeps one world for the env's life and
// destroys the bodies at reset; the ids Box2D's broad phase then recycles can order contacts differently, which
// moves its later episodes by float rounding (docs/box2d.md). A new world per episode is what gymnasium's first
// episode is, so the alignment tests compare against that, from the same generator state.
//
// State (GetState/SetState, snapshots): the generator state the episode started from, then the 4 action values
// of every step since; SetState rebuilds the episode and replays them (ActionLog, replay.h).
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

class BipedalWalkerEnv : public Env {
 public:
  static constexpr const char* kName = "BipedalWalker";

  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{1600}, "truncate after this many steps", {}},
            {"reward_threshold", 300.0, "solved score", {}},
            {"hardcore", false, "terrain with stumps, pits and stairs", {}}};
  }

  static void DefineSpec(const Config&, SpecBuilder& b) {
    // gymnasium's observation bounds (hull, joints and their speeds, leg contacts, then 10 lidar fractions); EnvPool
    // 1.2.5's own are shown by its face only (see LunarLanderEnv::DefineSpec)
    std::vector<double> low = {-M_PI, -5, -5, -5, -M_PI, -5, -M_PI, -5, 0, -M_PI, -5, -M_PI, -5, 0}, high;
    for (double v : low) high.push_back(v == 0 ? 5.0 : -v);
    low.resize(24, -1.0);
    high.resize(24, 1.0);
    const int obs = b.Obs("obs", DType::kFloat32, {24}, low, high);
    b.EnvPoolObsBounds(obs, {kFloatMin}, {kFloatMax});
    b.Action("action", DType::kFloat32, {4}, {-1.0}, {1.0});
  }

  BipedalWalkerEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed), hardcore_(c.Get<bool>("hardcore")), listener_(this), log_(c, "BipedalWalker", 4, -1) {}

  void Reset(Output& out) override {
    rng_.SeedFrom(gen_);
    Start();
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const float* a = action.Get<float>(0);
    Advance(a, true);
    log_.Add(a);
    out.SetReward(reward_);
    out.SetTerminated(terminated_);
    Write(out);
  }

  std::vector<double> GetState() const override { return log_.State(); }

  void SetState(const std::vector<double>& s) override {
    log_.Replay(s, rng_, [this] { Start(); }, [this](const float* a) { Advance(a, true); });
  }

 private:
  static constexpr double kFloatMin = 1.1754943508222875e-38, kFloatMax = 3.4028234663852886e+38;
  static constexpr double kFps = 50, kScale = 30.0, kMotorsTorque = 80, kSpeedHip = 4, kSpeedKnee = 6;
  static constexpr double kLidarRange = 160 / kScale, kInitialRandom = 5;
  static constexpr double kLegDown = -8 / kScale, kLegW = 8 / kScale, kLegH = 34 / kScale;
  static constexpr double kViewportW = 600, kViewportH = 400, kTerrainStep = 14 / kScale;
  static constexpr int kTerrainLength = 200, kTerrainGrass = 10, kTerrainStartpad = 20;
  static constexpr double kTerrainHeight = kViewportH / kScale / 4, kFriction = 2.5;

  // gymnasium's ContactDetector: the hull touching anything ends the game; legs 1 and 3 track ground contact.
  friend class ContactRelay<BipedalWalkerEnv>;
  void Touch(b2Body* a, b2Body* b, bool begin) {
    if (begin && (hull_ == a || hull_ == b)) game_over_ = true;
    for (int k : {1, 3}) {
      if (legs_[k] == a || legs_[k] == b) ground_contact_[k] = begin;
    }
  }

  // gymnasium's LidarCallback: the closest fixture of category 1 (the terrain) along the ray.
  struct Lidar : public b2RayCastCallback {
    float32 ReportFixture(b2Fixture* fixture, const b2Vec2&, const b2Vec2&, float32 f) override {
      if ((fixture->GetFilterData().categoryBits & 1) == 0) return -1;
      fraction = f;
      return f;
    }
    double fraction = 1.0;
  };

  static b2Vec2 V(double x, double y) { return b2Vec2(static_cast<float32>(x), static_cast<float32>(y)); }
  static double Sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }

  void StaticPolygon(const double (&p)[4][2]) {
    b2Vec2 v[4];
    for (int i = 0; i < 4; ++i) v[i] = V(p[i][0], p[i][1]);
    b2PolygonShape shape;
    shape.Set(v, 4);
    b2FixtureDef f;  // gymnasium's fd_polygon
    f.shape = &shape;
    f.friction = static_cast<float32>(kFriction);
    b2BodyDef def;
    world_->CreateBody(&def)->CreateFixture(&f);
  }

  // gymnasium's _generate_terrain; the draws and their order are gymnasium's.
  void GenerateTerrain() {
    enum { kGrass, kStump, kStairs, kPit, kStates };
    int64_t state = kGrass;
    double velocity = 0.0, y = kTerrainHeight, original_y = 0;
    int64_t counter = kTerrainStartpad, stair_steps = 0, stair_width = 0, stair_height = 0;
    bool oneshot = false;
    for (int i = 0; i < kTerrainLength; ++i) {
      const double x = i * kTerrainStep;
      terrain_x_[i] = x;
      if (state == kGrass && !oneshot) {
        velocity = 0.8 * velocity + 0.01 * Sign(kTerrainHeight - y);
        if (i > kTerrainStartpad) velocity += rng_.Uniform(-1, 1) / kScale;
        y += velocity;
      } else if (state == kPit && oneshot) {
        counter = rng_.Integers(3, 5);
        const double poly[4][2] = {
            {x, y}, {x + kTerrainStep, y}, {x + kTerrainStep, y - 4 * kTerrainStep}, {x, y - 4 * kTerrainStep}};
        StaticPolygon(poly);
        double moved[4][2];
        for (int k = 0; k < 4; ++k) {
          moved[k][0] = poly[k][0] + kTerrainStep * static_cast<double>(counter);
          moved[k][1] = poly[k][1];
        }
        StaticPolygon(moved);
        counter += 2;
        original_y = y;
      } else if (state == kPit && !oneshot) {
        y = original_y;
        if (counter > 1) y -= 4 * kTerrainStep;
      } else if (state == kStump && oneshot) {
        counter = rng_.Integers(1, 3);
        const double c = static_cast<double>(counter);
        const double poly[4][2] = {
            {x, y}, {x + c * kTerrainStep, y}, {x + c * kTerrainStep, y + c * kTerrainStep}, {x, y + c * kTerrainStep}};
        StaticPolygon(poly);
      } else if (state == kStairs && oneshot) {
        stair_height = rng_.Random() > 0.5 ? +1 : -1;
        stair_width = rng_.Integers(4, 5);
        stair_steps = rng_.Integers(3, 5);
        original_y = y;
        for (int64_t s = 0; s < stair_steps; ++s) {
          const double poly[4][2] = {{x + static_cast<double>(s * stair_width) * kTerrainStep,
                                      y + static_cast<double>(s * stair_height) * kTerrainStep},
                                     {x + static_cast<double>((1 + s) * stair_width) * kTerrainStep,
                                      y + static_cast<double>(s * stair_height) * kTerrainStep},
                                     {x + static_cast<double>((1 + s) * stair_width) * kTerrainStep,
                                      y + static_cast<double>(-1 + s * stair_height) * kTerrainStep},
                                     {x + static_cast<double>(s * stair_width) * kTerrainStep,
                                      y + static_cast<double>(-1 + s * stair_height) * kTerrainStep}};
          StaticPolygon(poly);
        }
        counter = stair_steps * stair_width;
      } else if (state == kStairs && !oneshot) {
        const int64_t s = stair_steps * stair_width - counter - stair_height;
        const double n = static_cast<double>(s) / static_cast<double>(stair_width);
        y = original_y + (n * static_cast<double>(stair_height)) * kTerrainStep;
      }
      oneshot = false;
      terrain_y_[i] = y;
      counter -= 1;
      if (counter == 0) {
        counter = rng_.Integers(kTerrainGrass / 2, kTerrainGrass);
        if (state == kGrass && hardcore_) {
          state = rng_.Integers(1, kStates);
        } else {
          state = kGrass;
        }
        oneshot = true;
      }
    }
    for (int i = 0; i < kTerrainLength - 1; ++i) {
      b2EdgeShape edge;
      edge.Set(V(terrain_x_[i], terrain_y_[i]), V(terrain_x_[i + 1], terrain_y_[i + 1]));
      b2FixtureDef f;  // gymnasium's fd_edge
      f.shape = &edge;
      f.friction = static_cast<float32>(kFriction);
      f.filter.categoryBits = 0x0001;
      b2BodyDef def;
      world_->CreateBody(&def)->CreateFixture(&f);
    }
  }

  // gymnasium's _generate_clouds draws (the clouds are only drawn, so only the draws matter here).
  void SkipClouds() {
    for (int c = 0; c < kTerrainLength / 20; ++c) {
      for (int k = 0; k < 1 + 5 * 2; ++k) rng_.Random();
    }
  }

  b2Body* DynamicBox(double x, double y, double angle, double hx, double hy) {
    b2BodyDef def;
    def.type = b2_dynamicBody;
    def.position = V(x, y);
    def.angle = static_cast<float32>(angle);
    b2Body* body = world_->CreateBody(&def);
    b2PolygonShape shape;
    shape.SetAsBox(static_cast<float32>(hx), static_cast<float32>(hy));
    b2FixtureDef f;  // gymnasium's LEG_FD / LOWER_FD
    f.shape = &shape;
    f.density = 1.0f;
    f.restitution = 0.0f;
    f.filter.categoryBits = 0x0020;
    f.filter.maskBits = 0x001;
    body->CreateFixture(&f);
    return body;
  }

  b2RevoluteJoint* Joint(b2Body* a, b2Body* b, double anchor_a_y, double anchor_b_y, double speed, double lower,
                         double upper) {
    b2RevoluteJointDef rjd;
    rjd.bodyA = a;
    rjd.bodyB = b;
    rjd.referenceAngle = PyboxReferenceAngle(a, b);
    rjd.localAnchorA = V(0, anchor_a_y);
    rjd.localAnchorB = V(0, anchor_b_y);
    rjd.enableMotor = true;
    rjd.enableLimit = true;
    rjd.maxMotorTorque = static_cast<float32>(kMotorsTorque);
    rjd.motorSpeed = static_cast<float32>(speed);
    rjd.lowerAngle = static_cast<float32>(lower);
    rjd.upperAngle = static_cast<float32>(upper);
    return static_cast<b2RevoluteJoint*>(world_->CreateJoint(&rjd));
  }

  // gymnasium's reset from rng_'s current state, ending with its step of action (0, 0, 0, 0).
  void Start() {
    log_.Start(rng_);
    world_ = std::make_unique<b2World>(b2Vec2(0, -10));
    world_->SetContactListener(&listener_);
    game_over_ = false;
    has_prev_shaping_ = false;
    hull_ = nullptr;
    for (int k = 0; k < 4; ++k) legs_[k] = nullptr, ground_contact_[k] = false;
    GenerateTerrain();
    SkipClouds();

    const double init_x = kTerrainStep * kTerrainStartpad / 2, init_y = kTerrainHeight + 2 * kLegH;
    b2BodyDef hull_def;
    hull_def.type = b2_dynamicBody;
    hull_def.position = V(init_x, init_y);
    hull_ = world_->CreateBody(&hull_def);
    static constexpr double kHull[5][2] = {{-30, +9}, {+6, +9}, {+34, +1}, {+34, -8}, {-30, -8}};
    b2Vec2 verts[5];
    for (int i = 0; i < 5; ++i) verts[i] = V(kHull[i][0] / kScale, kHull[i][1] / kScale);
    b2PolygonShape hull_shape;
    hull_shape.Set(verts, 5);
    b2FixtureDef hull_fix;  // gymnasium's HULL_FD
    hull_fix.shape = &hull_shape;
    hull_fix.density = 5.0f;
    hull_fix.friction = 0.1f;
    hull_fix.filter.categoryBits = 0x0020;
    hull_fix.filter.maskBits = 0x001;
    hull_fix.restitution = 0.0f;
    hull_->CreateFixture(&hull_fix);
    hull_->ApplyForceToCenter(V(rng_.Uniform(-kInitialRandom, kInitialRandom), 0), true);

    for (int k = 0; k < 2; ++k) {
      const int i = k == 0 ? -1 : +1;
      legs_[2 * k] = DynamicBox(init_x, init_y - kLegH / 2 - kLegDown, i * 0.05, kLegW / 2, kLegH / 2);
      joints_[2 * k] = Joint(hull_, legs_[2 * k], kLegDown, kLegH / 2, i, -0.8, 1.1);
      legs_[2 * k + 1] = DynamicBox(init_x, init_y - kLegH * 3 / 2 - kLegDown, i * 0.05, 0.8 * kLegW / 2, kLegH / 2);
      joints_[2 * k + 1] = Joint(legs_[2 * k], legs_[2 * k + 1], -kLegH / 2, kLegH / 2, 1, -1.6, -0.1);
    }
    const float noop[4] = {0, 0, 0, 0};
    Advance(noop, false);
  }

  // gymnasium's step without the outputs. float_actions: the action is numpy float32 (every step but reset's,
  // whose np.array([0, 0, 0, 0]) is int64: its cost terms stay float64, all zero).
  void Advance(const float* a, bool float_actions) {
    float clipped[4];
    for (int j = 0; j < 4; ++j) {
      const float v = a[j];
      const double speed = (j % 2 == 0 ? kSpeedHip : kSpeedKnee) * Sign(v);
      clipped[j] = std::clamp(std::abs(v), 0.0f, 1.0f);  // np.clip(np.abs(a), 0, 1) in float32
      joints_[j]->SetMotorSpeed(static_cast<float32>(speed));
      joints_[j]->SetMaxMotorTorque(static_cast<float32>(kMotorsTorque) * clipped[j]);  // float32 product
    }

    world_->Step(static_cast<float32>(1.0 / kFps), 6 * 30, 2 * 30);

    const b2Vec2 pos = hull_->GetPosition();
    const b2Vec2 vel = hull_->GetLinearVelocity();
    const double px = pos.x, py = pos.y;
    for (int i = 0; i < 10; ++i) {
      lidar_[i].fraction = 1.0;
      const double p2x = px + std::sin(1.5 * i / 10.0) * kLidarRange;
      const double p2y = py - std::cos(1.5 * i / 10.0) * kLidarRange;
      world_->RayCast(&lidar_[i], pos, V(p2x, p2y));
    }
    state_[0] = hull_->GetAngle();
    state_[1] = 2.0 * static_cast<double>(hull_->GetAngularVelocity()) / kFps;
    state_[2] = 0.3 * static_cast<double>(vel.x) * (kViewportW / kScale) / kFps;
    state_[3] = 0.3 * static_cast<double>(vel.y) * (kViewportH / kScale) / kFps;
    state_[4] = joints_[0]->GetJointAngle();
    state_[5] = static_cast<double>(joints_[0]->GetJointSpeed()) / kSpeedHip;
    state_[6] = static_cast<double>(joints_[1]->GetJointAngle()) + 1.0;
    state_[7] = static_cast<double>(joints_[1]->GetJointSpeed()) / kSpeedKnee;
    state_[8] = ground_contact_[1] ? 1.0 : 0.0;
    state_[9] = joints_[2]->GetJointAngle();
    state_[10] = static_cast<double>(joints_[2]->GetJointSpeed()) / kSpeedHip;
    state_[11] = static_cast<double>(joints_[3]->GetJointAngle()) + 1.0;
    state_[12] = static_cast<double>(joints_[3]->GetJointSpeed()) / kSpeedKnee;
    state_[13] = ground_contact_[3] ? 1.0 : 0.0;
    for (int i = 0; i < 10; ++i) state_[14 + i] = lidar_[i].fraction;

    double shaping = 130 * px / kScale;
    shaping -= 5.0 * std::abs(state_[0]);
    double reward = 0;
    if (has_prev_shaping_) reward = shaping - prev_shaping_;
    prev_shaping_ = shaping;
    has_prev_shaping_ = true;
    // `reward -= 0.00035 * MOTORS_TORQUE * np.clip(np.abs(a), 0, 1)`: with a float32 action numpy 2 makes each
    // term and each difference float32
    float r32 = static_cast<float>(reward);
    if (float_actions) {
      const float cost = static_cast<float>(0.00035 * kMotorsTorque);
      for (float c : clipped) r32 = r32 - cost * c;
    }
    reward_ = float_actions ? r32 : static_cast<float>(reward);
    terminated_ = false;
    if (game_over_ || px < 0) {
      reward_ = -100;
      terminated_ = true;
    }
    if (px > (kTerrainLength - kTerrainGrass) * kTerrainStep) terminated_ = true;
  }

  void Write(Output& out) {
    float* obs = out.Obs<float>(0);
    for (int i = 0; i < 24; ++i) obs[i] = static_cast<float>(state_[i]);
  }

  const bool hardcore_;
  ContactRelay<BipedalWalkerEnv> listener_;
  Lidar lidar_[10];
  NumpyGenerator rng_;
  ActionLog log_;  // the episode's start and actions (GetState)
  std::unique_ptr<b2World> world_;
  b2Body* hull_ = nullptr;
  b2Body* legs_[4] = {};
  b2RevoluteJoint* joints_[4] = {};
  bool ground_contact_[4] = {};
  bool game_over_ = false, has_prev_shaping_ = false, terminated_ = false;
  double prev_shaping_ = 0;
  float reward_ = 0;
  double terrain_x_[kTerrainLength] = {}, terrain_y_[kTerrainLength] = {};
  double state_[24] = {};
};

}  // namespace pp::box2d
