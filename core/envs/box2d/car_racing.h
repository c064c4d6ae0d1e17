// CarRacing-v2/v3, aligned with gymnasium 1.4's gymnasium.envs.box2d.car_racing.CarRacing (and car_dynamics.Car).
// Over 600 lines for one reason: one header per env (the family's rule), and this env is gymnasium's track
// generator, tyre model and renderer together.
//
// Track generation, the car's tyre model and the tiles (sensors that count the lap) are gymnasium's Python,
// reproduced as in lunar_lander.h (doubles where Python computes, float32 where pybox2d hands values to Box2D,
// numpy's generator for the draws), so rewards and terminations are gymnasium's exactly. The observation is the
// 96x96x3 frame gymnasium draws with pygame on a 1000x800 surface and shrinks with pygame's smoothscale; here the
// same polygons are filled on a 1000x800 canvas of palette indices (pixel centres inside the polygon, no
// anti-aliased edges) and shrunk to 96x96 as pygame's smoothscale does, bit for bit (palette_canvas.h), so frames
// equal gymnasium's away from polygon edges and agree within a tolerance (docs/box2d.md) overall. The score text
// gymnasium prints in the bottom-left corner is not drawn (the area stays the indicator bar's black).
//
// State (GetState/SetState, snapshots): the generator state the episode started from, then the 3 action values
// (or 1 for the discrete env) of every step since; SetState replays them (ActionLog, replay.h).
#pragma once

#include <Box2D/Box2D.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/box2d/palette_canvas.h"
#include "core/envs/box2d/pybox2d.h"
#include "core/envs/box2d/replay.h"
#include "core/envs/common/numpy_random.h"

namespace pp::box2d {

class CarRacingEnv : public Env {
 public:
  static constexpr const char* kName = "CarRacing";

  static std::vector<ConfigKey> ConfigKeys() {
    return {{"max_episode_steps", int64_t{1000}, "truncate after this many steps", {}},
            {"reward_threshold", 900.0, "solved score", {}},
            {"lap_complete_percent", 0.95, "share of tiles to visit before crossing the start counts as a lap", {}},
            {"domain_randomize", false, "random road, background and grass colours at each reset", {}},
            {"continuous", true, "Box([-1, 0, 0], 1, (3,)) (steer, gas, brake) instead of Discrete(5)", {}}};
  }

  static void DefineSpec(const Config& c, SpecBuilder& b) {
    const double p = c.Get<double>("lap_complete_percent");
    if (!(p >= 0.0 && p <= 1.0)) {
      throw std::invalid_argument("CarRacing: lap_complete_percent must be in [0, 1], got " + std::to_string(p));
    }
    b.Obs("obs", DType::kUInt8, {kStateH, kStateW, 3}, {0.0}, {255.0});
    if (c.Get<bool>("continuous")) {
      b.Action("action", DType::kFloat32, {3}, {-1.0, 0.0, 0.0}, {1.0, 1.0, 1.0});
    } else {
      b.DiscreteAction(5);
    }
  }

  CarRacingEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        continuous_(c.Get<bool>("continuous")),
        domain_randomize_(c.Get<bool>("domain_randomize")),
        lap_complete_percent_(c.Get<double>("lap_complete_percent")),
        listener_(this),
        log_(c, "CarRacing", continuous_ ? 3 : 1, continuous_ ? -1 : 4) {
    const std::pair<Ink, Rgb> fixed[] = {{kBlack, {0, 0, 0}},     {kWhite, {255, 255, 255}}, {kRed, {255, 0, 0}},
                                         {kHull, {204, 0, 0}},    {kStripe, {77, 77, 77}},   {kBlue, {0, 0, 255}},
                                         {kViolet, {51, 0, 255}}, {kGreen, {0, 255, 0}}};
    for (const auto& [ink, rgb] : fixed) canvas_.SetInk(ink, rgb);
  }

  void Reset(Output& out) override {
    rng_.SeedFrom(gen_);
    Start(true);
    Write(out);
  }

  void Step(const ActionView& action, Output& out) override {
    float a[3] = {0, 0, 0};
    if (continuous_) {
      std::copy_n(action.Get<float>(0), 3, a);
    } else {
      a[0] = static_cast<float>(action.Discrete());
    }
    Advance(a, true);
    log_.Add(a);
    out.SetReward(static_cast<float>(step_reward_));
    out.SetTerminated(terminated_);
    Write(out);
  }

  std::vector<double> GetState() const override { return log_.State(); }

  void SetState(const std::vector<double>& s) override {
    // no drawing while replaying: the next Step draws its own frame
    log_.Replay(s, rng_, [this] { Start(false); }, [this](const float* a) { Advance(a, false); });
  }

 private:
  static constexpr int kStateW = 96, kStateH = 96, kWindowW = 1000, kWindowH = 800;
  static constexpr int kBarTop = kWindowH - 5 * kWindowH / 40;  // the indicator bar's first row
  static constexpr double kScale = 6.0, kTrackRad = 900 / kScale, kPlayfield = 2000 / kScale, kFps = 50;
  static constexpr double kZoom = 2.7, kTrackDetailStep = 21 / kScale, kTrackTurnRate = 0.31;
  static constexpr double kTrackWidth = 40 / kScale, kBorder = 8 / kScale, kGrassDim = kPlayfield / 20.0;
  static constexpr int kBorderMinCount = 4;
  // car_dynamics.py
  static constexpr double kSize = 0.02, kEnginePower = 100000000 * kSize * kSize;
  static constexpr double kWheelMomentOfInertia = 4000 * kSize * kSize, kFrictionLimit = 1000000 * kSize * kSize;
  static constexpr double kWheelR = 27, kWheelW = 14;

  // The frame's colours, as canvas inks (palette_canvas.h): the episode's background, grass and road colours (set
  // by InitColors) and gymnasium's fixed ones.
  enum Ink : uint8_t {
    kBlack,
    kBackground,
    kGrass,
    kRoad,  // kRoad + i % 3: tile i's colour until something touches it, then kRoad
    kRoad1,
    kRoad2,
    kWhite,
    kRed,
    kHull,
    kStripe,
    kBlue,
    kViolet,
    kGreen,
  };
  using Canvas = PaletteCanvas<kWindowW, kWindowH, kStateW, kStateH>;
  using Rgb = Canvas::Rgb;

  struct Tile {
    Ink ink = kRoad;
    bool visited = false;
    int idx = 0;
  };
  struct Wheel {
    b2Body* body = nullptr;
    b2RevoluteJoint* joint = nullptr;
    double gas = 0, brake = 0, steer = 0, phase = 0, omega = 0, wheel_rad = 0;
    std::set<Tile*> tiles;
  };
  struct Poly {
    std::array<std::array<double, 2>, 4> p;
    Ink ink;
    Tile* tile = nullptr;  // road polys draw their tile's current colour
  };

  // gymnasium's FrictionDetector. Bodies carry their Tile / Wheel in user data.
  friend class ContactRelay<CarRacingEnv>;
  void Touch(b2Body* a, b2Body* b, bool begin) {
    Tile* tile = nullptr;
    b2Body* obj = nullptr;
    if (Tile* t = TileOf(a)) tile = t, obj = b;
    if (Tile* t = TileOf(b)) tile = t, obj = a;
    if (tile == nullptr) return;
    tile->ink = kRoad;
    Wheel* wheel = WheelOf(obj);
    if (wheel == nullptr) return;
    if (begin) {
      wheel->tiles.insert(tile);
      if (!tile->visited) {
        tile->visited = true;
        reward_ += 1000.0 / static_cast<double>(track_.size());
        tile_visited_count_ += 1;
        if (tile->idx == 0 &&
            static_cast<double>(tile_visited_count_) / static_cast<double>(track_.size()) > lap_complete_percent_) {
          new_lap_ = true;
        }
      }
    } else {
      wheel->tiles.erase(tile);
    }
  }

  static b2Vec2 V(double x, double y) { return b2Vec2(static_cast<float32>(x), static_cast<float32>(y)); }
  static double Sign(double v) { return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0); }
  Tile* TileOf(b2Body* b) {
    const auto i = reinterpret_cast<intptr_t>(b->GetUserData()) - 1;  // 1 + tile index, 0: none
    return i >= 0 && i < static_cast<intptr_t>(tiles_.size()) ? &tiles_[i] : nullptr;
  }
  Wheel* WheelOf(b2Body* b) {
    for (Wheel& w : wheels_) {
      if (w.body == b) return &w;
    }
    return nullptr;
  }

  void InitColors() {
    if (domain_randomize_) {  // gymnasium's _reinit_colors(randomize=True)
      for (double& c : road_color_) c = rng_.Uniform(0, 210);
      for (double& c : bg_color_) c = rng_.Uniform(0, 210);
      grass_color_ = bg_color_;
      grass_color_[rng_.Integers(0, 3)] += 20;
    } else {
      road_color_ = {102, 102, 102};
      bg_color_ = {102, 204, 102};
      grass_color_ = {102, 230, 102};
    }
    const auto to_int = [](const std::array<double, 3>& c) {  // pygame takes the int() of each component
      return Rgb{static_cast<int>(c[0]), static_cast<int>(c[1]), static_cast<int>(c[2])};
    };
    canvas_.SetInk(kBackground, to_int(bg_color_));
    canvas_.SetInk(kGrass, to_int(grass_color_));
    for (int k = 0; k < 3; ++k) {  // gymnasium's tile colours, road_color + 0.01 * (i % 3) * 255
      const double c = 0.01 * k * 255;
      canvas_.SetInk(static_cast<Ink>(kRoad + k), to_int({road_color_[0] + c, road_color_[1] + c, road_color_[2] + c}));
    }
  }

  // gymnasium's _create_track: false when the track does not close (then it is drawn again).
  bool CreateTrack() {
    constexpr int kCheckpoints = 12;
    double cp[kCheckpoints][3];
    for (int c = 0; c < kCheckpoints; ++c) {
      const double noise = rng_.Uniform(0, 2 * M_PI * 1 / kCheckpoints);
      double alpha = 2 * M_PI * c / kCheckpoints + noise;
      double rad = rng_.Uniform(kTrackRad / 3, kTrackRad);
      if (c == 0) {
        alpha = 0;
        rad = 1.5 * kTrackRad;
      }
      if (c == kCheckpoints - 1) {
        alpha = 2 * M_PI * c / kCheckpoints;
        start_alpha_ = 2 * M_PI * (-0.5) / kCheckpoints;
        rad = 1.5 * kTrackRad;
      }
      cp[c][0] = alpha;
      cp[c][1] = rad * std::cos(alpha);
      cp[c][2] = rad * std::sin(alpha);
    }
    double x = 1.5 * kTrackRad, y = 0, beta = 0;
    int dest_i = 0, laps = 0, no_freeze = 2500;
    bool visited_other_side = false;
    track_.clear();
    double dest_x = 0, dest_y = 0;
    while (true) {
      double alpha = std::atan2(y, x);
      if (visited_other_side && alpha > 0) {
        laps += 1;
        visited_other_side = false;
      }
      if (alpha < 0) {
        visited_other_side = true;
        alpha += 2 * M_PI;
      }
      while (true) {
        bool failed = true;
        while (true) {
          const double* d = cp[dest_i % kCheckpoints];
          dest_x = d[1];
          dest_y = d[2];
          if (alpha <= d[0]) {
            failed = false;
            break;
          }
          dest_i += 1;
          if (dest_i % kCheckpoints == 0) break;
        }
        if (!failed) break;
        alpha -= 2 * M_PI;
      }
      const double r1x = std::cos(beta), r1y = std::sin(beta);
      const double p1x = -r1y, p1y = r1x;
      const double dest_dx = dest_x - x, dest_dy = dest_y - y;
      double proj = r1x * dest_dx + r1y * dest_dy;
      while (beta - alpha > 1.5 * M_PI) beta -= 2 * M_PI;
      while (beta - alpha < -1.5 * M_PI) beta += 2 * M_PI;
      const double prev_beta = beta;
      proj *= kScale;
      if (proj > 0.3) beta -= std::min(kTrackTurnRate, std::abs(0.001 * proj));
      if (proj < -0.3) beta += std::min(kTrackTurnRate, std::abs(0.001 * proj));
      x += p1x * kTrackDetailStep;
      y += p1y * kTrackDetailStep;
      track_.push_back({alpha, prev_beta * 0.5 + beta * 0.5, x, y});
      if (laps > 4) break;
      no_freeze -= 1;
      if (no_freeze == 0) break;
    }
    int i1 = -1, i2 = -1;
    int i = static_cast<int>(track_.size());
    while (true) {
      i -= 1;
      if (i == 0) return false;
      const bool pass = track_[i][0] > start_alpha_ && track_[i - 1][0] <= start_alpha_;
      if (pass && i2 == -1) {
        i2 = i;
      } else if (pass && i1 == -1) {
        i1 = i;
        break;
      }
    }
    // track[i1 : i2 - 1]
    std::vector<std::array<double, 4>> t(track_.begin() + i1, track_.begin() + std::max(i1, i2 - 1));
    track_.swap(t);
    if (track_.empty()) return false;  // Python's track[0] would raise; gymnasium never gets here
    const double first_beta = track_[0][1];
    const double fpx = std::cos(first_beta), fpy = std::sin(first_beta);
    const double dx = fpx * (track_[0][2] - track_.back()[2]), dy = fpy * (track_[0][3] - track_.back()[3]);
    if (std::sqrt(dx * dx + dy * dy) > kTrackDetailStep) return false;
    return true;
  }

  const std::array<double, 4>& TrackAt(int i) const {  // Python's track[i], negative i from the end
    const int n = static_cast<int>(track_.size());
    return track_[((i % n) + n) % n];
  }

  void BuildRoad() {
    const int n = static_cast<int>(track_.size());
    std::vector<char> border(n, 0);
    for (int i = 0; i < n; ++i) {
      bool good = true;
      double oneside = 0;
      for (int neg = 0; neg < kBorderMinCount; ++neg) {
        const double beta1 = TrackAt(i - neg)[1], beta2 = TrackAt(i - neg - 1)[1];
        good &= std::abs(beta1 - beta2) > kTrackTurnRate * 0.2;
        oneside += Sign(beta1 - beta2);
      }
      good &= std::abs(oneside) == kBorderMinCount;
      border[i] = good;
    }
    for (int i = 0; i < n; ++i) {
      for (int neg = 0; neg < kBorderMinCount; ++neg) border[((i - neg) % n + n) % n] |= border[i];
    }
    tiles_.assign(n, Tile{});
    polys_.clear();
    for (int i = 0; i < n; ++i) {
      const auto& [alpha1, beta1, x1, y1] = TrackAt(i);
      const auto& [alpha2, beta2, x2, y2] = TrackAt(i - 1);
      (void)alpha1;
      (void)alpha2;
      const std::array<double, 2> r1l = {x1 - kTrackWidth * std::cos(beta1), y1 - kTrackWidth * std::sin(beta1)};
      const std::array<double, 2> r1r = {x1 + kTrackWidth * std::cos(beta1), y1 + kTrackWidth * std::sin(beta1)};
      const std::array<double, 2> r2l = {x2 - kTrackWidth * std::cos(beta2), y2 - kTrackWidth * std::sin(beta2)};
      const std::array<double, 2> r2r = {x2 + kTrackWidth * std::cos(beta2), y2 + kTrackWidth * std::sin(beta2)};
      b2Vec2 v[4] = {V(r1l[0], r1l[1]), V(r1r[0], r1r[1]), V(r2r[0], r2r[1]), V(r2l[0], r2l[1])};
      b2PolygonShape shape;
      shape.Set(v, 4);
      b2FixtureDef f;  // gymnasium's fd_tile
      f.shape = &shape;
      b2BodyDef def;
      def.userData = reinterpret_cast<void*>(static_cast<intptr_t>(i) + 1);
      b2Body* body = world_->CreateBody(&def);
      body->CreateFixture(&f)->SetSensor(true);
      Tile& tile = tiles_[i];
      tile.ink = static_cast<Ink>(kRoad + i % 3);
      tile.idx = i;
      polys_.push_back({{r1l, r1r, r2r, r2l}, kRoad, &tile});
      if (border[i]) {
        const double side = Sign(beta2 - beta1);
        const std::array<double, 2> b1l = {x1 + side * kTrackWidth * std::cos(beta1),
                                           y1 + side * kTrackWidth * std::sin(beta1)};
        const std::array<double, 2> b1r = {x1 + side * (kTrackWidth + kBorder) * std::cos(beta1),
                                           y1 + side * (kTrackWidth + kBorder) * std::sin(beta1)};
        const std::array<double, 2> b2l = {x2 + side * kTrackWidth * std::cos(beta2),
                                           y2 + side * kTrackWidth * std::sin(beta2)};
        const std::array<double, 2> b2r = {x2 + side * (kTrackWidth + kBorder) * std::cos(beta2),
                                           y2 + side * (kTrackWidth + kBorder) * std::sin(beta2)};
        polys_.push_back({{b1l, b1r, b2r, b2l}, i % 2 == 0 ? kWhite : kRed, nullptr});
      }
    }
  }

  b2Body* Polygons(double x, double y, double angle, const std::vector<std::vector<std::array<double, 2>>>& polys,
                   float density, bool wheel) {
    b2BodyDef def;
    def.type = b2_dynamicBody;
    def.position = V(x, y);
    def.angle = static_cast<float32>(angle);
    b2Body* body = world_->CreateBody(&def);
    for (const auto& poly : polys) {
      b2Vec2 v[8];
      for (size_t k = 0; k < poly.size(); ++k) v[k] = V(poly[k][0], poly[k][1]);
      b2PolygonShape shape;
      shape.Set(v, static_cast<int32>(poly.size()));
      b2FixtureDef f;
      f.shape = &shape;
      f.density = density;
      if (wheel) {
        f.filter.categoryBits = 0x0020;
        f.filter.maskBits = 0x001;
        f.restitution = 0.0f;
      }
      body->CreateFixture(&f);
    }
    return body;
  }

  // car_dynamics.Car(world, init_angle, init_x, init_y)
  void CreateCar(double init_angle, double init_x, double init_y) {
    static constexpr double kHull1[4][2] = {{-60, +130}, {+60, +130}, {+60, +110}, {-60, +110}};
    static constexpr double kHull2[4][2] = {{-15, +120}, {+15, +120}, {+20, +20}, {-20, 20}};
    static constexpr double kHull3[8][2] = {{+25, +20}, {+50, -10}, {+50, -40}, {+20, -90},
                                            {-20, -90}, {-50, -40}, {-50, -10}, {-25, +20}};
    static constexpr double kHull4[4][2] = {{-50, -120}, {+50, -120}, {+50, -90}, {-50, -90}};
    std::vector<std::vector<std::array<double, 2>>> hull(4);
    for (const auto& p : kHull1) hull[0].push_back({p[0] * kSize, p[1] * kSize});
    for (const auto& p : kHull2) hull[1].push_back({p[0] * kSize, p[1] * kSize});
    for (const auto& p : kHull3) hull[2].push_back({p[0] * kSize, p[1] * kSize});
    for (const auto& p : kHull4) hull[3].push_back({p[0] * kSize, p[1] * kSize});
    hull_ = Polygons(init_x, init_y, init_angle, hull, 1.0f, false);
    static constexpr double kWheelPos[4][2] = {{-55, +80}, {+55, +80}, {-55, -82}, {+55, -82}};
    const double wheel_poly[4][2] = {
        {-kWheelW, +kWheelR}, {+kWheelW, +kWheelR}, {+kWheelW, -kWheelR}, {-kWheelW, -kWheelR}};
    for (int k = 0; k < 4; ++k) {
      const double wx = kWheelPos[k][0], wy = kWheelPos[k][1], front_k = 1.0;
      std::vector<std::vector<std::array<double, 2>>> poly(1);
      for (const auto& p : wheel_poly) poly[0].push_back({p[0] * front_k * kSize, p[1] * front_k * kSize});
      Wheel& w = wheels_[k];
      w = Wheel{};
      w.body = Polygons(init_x + wx * kSize, init_y + wy * kSize, init_angle, poly, 0.1f, true);
      w.wheel_rad = front_k * kWheelR * kSize;
      b2RevoluteJointDef rjd;
      rjd.bodyA = hull_;
      rjd.bodyB = w.body;
      rjd.referenceAngle = PyboxReferenceAngle(hull_, w.body);
      rjd.localAnchorA = V(wx * kSize, wy * kSize);
      rjd.localAnchorB = V(0, 0);
      rjd.enableMotor = true;
      rjd.enableLimit = true;
      rjd.maxMotorTorque = static_cast<float32>(180 * 900 * kSize * kSize);
      rjd.motorSpeed = 0;
      rjd.lowerAngle = -0.4f;
      rjd.upperAngle = +0.4f;
      w.joint = static_cast<b2RevoluteJoint*>(world_->CreateJoint(&rjd));
    }
  }

  // gymnasium's reset from rng_'s current state, ending with its step(None) (and its frame if `draw`).
  void Start(bool draw) {
    log_.Start(rng_);
    world_.reset();  // the old world first: its bodies point into tiles_
    world_ = std::make_unique<b2World>(b2Vec2(0, 0));
    world_->SetContactListener(&listener_);
    reward_ = prev_reward_ = 0;
    tile_visited_count_ = 0;
    t_ = 0;
    new_lap_ = false;
    InitColors();
    while (!CreateTrack()) {
    }
    BuildRoad();
    CreateCar(track_[0][1], track_[0][2], track_[0][3]);
    Physics();
    if (draw) Render();
  }

  void Physics() {  // car.step(1 / FPS), world.Step, t += 1 / FPS
    const double dt = 1.0 / kFps;
    for (Wheel& w : wheels_) {
      const double jangle = w.joint->GetJointAngle();
      const double dir = Sign(w.steer - jangle);
      const double val = std::abs(w.steer - jangle);
      w.joint->SetMotorSpeed(static_cast<float32>(dir * std::min(50.0 * val, 3.0)));
      double friction_limit = kFrictionLimit * 0.6;
      for (Tile* tile : w.tiles) {
        (void)tile;
        friction_limit = std::max(friction_limit, kFrictionLimit * 1.0);
      }
      const b2Vec2 forw = w.body->GetWorldVector(b2Vec2(0, 1));
      const b2Vec2 side = w.body->GetWorldVector(b2Vec2(1, 0));
      const b2Vec2 v = w.body->GetLinearVelocity();
      const double vf = double(forw.x) * double(v.x) + double(forw.y) * double(v.y);
      const double vs = double(side.x) * double(v.x) + double(side.y) * double(v.y);
      w.omega += dt * kEnginePower * w.gas / kWheelMomentOfInertia / (std::abs(w.omega) + 5.0);
      if (w.brake >= 0.9) {
        w.omega = 0;
      } else if (w.brake > 0) {
        const double bdir = -Sign(w.omega);
        double bval = 15 * w.brake;
        if (std::abs(bval) > std::abs(w.omega)) bval = std::abs(w.omega);
        w.omega += bdir * bval;
      }
      w.phase += w.omega * dt;
      const double vr = w.omega * w.wheel_rad;
      double f_force = -vf + vr, p_force = -vs;
      f_force *= 205000 * kSize * kSize;
      p_force *= 205000 * kSize * kSize;
      double force = std::sqrt(f_force * f_force + p_force * p_force);
      if (std::abs(force) > friction_limit) {
        f_force /= force;
        p_force /= force;
        force = friction_limit;
        f_force *= force;
        p_force *= force;
      }
      w.omega -= dt * f_force * w.wheel_rad / kWheelMomentOfInertia;
      w.body->ApplyForceToCenter(
          V(p_force * double(side.x) + f_force * double(forw.x), p_force * double(side.y) + f_force * double(forw.y)),
          true);
    }
    world_->Step(static_cast<float32>(1.0 / kFps), 6 * 30, 2 * 30);
    t_ += 1.0 / kFps;
  }

  // gymnasium's step; the frame only if `draw` (drawing changes nothing else).
  void Advance(const float* a, bool draw) {
    double steer, gas, brake;
    if (continuous_) {
      steer = -static_cast<double>(a[0]);
      gas = a[1];
      brake = a[2];
    } else {
      const int d = static_cast<int>(a[0]);
      steer = -0.6 * (d == 1) + 0.6 * (d == 2);
      gas = 0.2 * (d == 3);
      brake = 0.8 * (d == 4);
    }
    wheels_[0].steer = wheels_[1].steer = steer;
    gas = std::clamp(gas, 0.0, 1.0);
    for (int k = 2; k < 4; ++k) {
      double diff = gas - wheels_[k].gas;
      if (diff > 0.1) diff = 0.1;
      wheels_[k].gas += diff;
    }
    for (Wheel& w : wheels_) w.brake = brake;
    Physics();
    if (draw) Render();
    reward_ -= 0.1;
    step_reward_ = reward_ - prev_reward_;
    prev_reward_ = reward_;
    terminated_ = tile_visited_count_ == static_cast<int>(track_.size()) || new_lap_;
    const b2Vec2 pos = hull_->GetPosition();
    if (std::abs(double(pos.x)) > kPlayfield || std::abs(double(pos.y)) > kPlayfield) {
      terminated_ = true;
      step_reward_ = -100;
    }
  }

  // ---- drawing: gymnasium's _render("state_pixels") on a 1000x800 canvas, then shrunk to 96x96 ----

  // World polygon -> window: gymnasium rotates by `angle`, scales by zoom, translates, then flips vertically.
  // With `clip`, gymnasium's test: skipped unless a vertex lies within max_dim of the window. `outside` as in
  // PaletteCanvas::Fill. Only the rows above the indicator bar are drawn: the bar (DrawIndicators) covers the rest.
  void FillWorld(const std::array<double, 2>* pts, int n, Ink ink, bool clip, int outside = -1) {
    double w[8][2];
    bool visible = !clip;
    const double max_dim = std::max({kGrassDim, kTrackWidth, kTrackDetailStep}) * std::sqrt(2.0) * kZoom * kScale;
    for (int k = 0; k < n; ++k) {
      const double x = pts[k][0] * cos_ - pts[k][1] * sin_, y = pts[k][0] * sin_ + pts[k][1] * cos_;
      w[k][0] = x * zoom_ + trans_[0];
      w[k][1] = y * zoom_ + trans_[1];
      visible = visible || ((-max_dim <= w[k][0] && w[k][0] <= kWindowW + max_dim) &&
                            (-max_dim <= w[k][1] && w[k][1] <= kWindowH + max_dim));
      w[k][1] = kWindowH - w[k][1];  // the flip
    }
    if (visible) canvas_.Fill(w, n, ink, outside, kBarTop);
  }

  void Render() {
    const double angle = -static_cast<double>(hull_->GetAngle());
    cos_ = std::cos(angle);
    sin_ = std::sin(angle);
    zoom_ = 0.1 * kScale * std::max(1 - t_, 0.0) + kZoom * kScale * std::min(t_, 1.0);
    const b2Vec2 pos = hull_->GetPosition();
    const double sx = -double(pos.x) * zoom_, sy = -double(pos.y) * zoom_;
    trans_[0] = kWindowW / 2.0 + (sx * cos_ - sy * sin_);
    trans_[1] = kWindowH / 4.0 + (sx * sin_ + sy * cos_);
    const std::array<double, 2> field[4] = {
        {kPlayfield, kPlayfield}, {kPlayfield, -kPlayfield}, {-kPlayfield, -kPlayfield}, {-kPlayfield, kPlayfield}};
    // the playfield on a new pygame Surface (black, seen beyond the playfield): one pass over the canvas
    FillWorld(field, 4, kBackground, false, kBlack);
    for (int gx = -20; gx < 20; gx += 2) {
      for (int gy = -20; gy < 20; gy += 2) {
        const std::array<double, 2> sq[4] = {{kGrassDim * gx + kGrassDim, kGrassDim * gy + 0},
                                             {kGrassDim * gx + 0, kGrassDim * gy + 0},
                                             {kGrassDim * gx + 0, kGrassDim * gy + kGrassDim},
                                             {kGrassDim * gx + kGrassDim, kGrassDim * gy + kGrassDim}};
        FillWorld(sq, 4, kGrass, true);
      }
    }
    for (const Poly& poly : polys_) FillWorld(poly.p.data(), 4, poly.tile ? poly.tile->ink : poly.ink, true);
    // the car: wheels (black, with the turning white stripe), then the hull
    for (int k = 0; k <= 4; ++k) {
      b2Body* body = k < 4 ? wheels_[k].body : hull_;
      for (b2Fixture* f = body->GetFixtureList(); f != nullptr; f = f->GetNext()) {  // one colour per body
        const auto* shape = static_cast<const b2PolygonShape*>(f->GetShape());
        std::array<double, 2> path[8];
        const b2Transform& xf = body->GetTransform();
        for (int v = 0; v < shape->m_count; ++v) {
          const b2Vec2 p = b2Mul(xf, shape->m_vertices[v]);
          path[v] = {double(p.x), double(p.y)};
        }
        FillWorld(path, shape->m_count, k < 4 ? kBlack : kHull, false);
        if (k < 4) DrawStripe(wheels_[k], xf);
      }
    }
    DrawIndicators();
    canvas_.Shrink(frame_.data());
  }

  void DrawStripe(const Wheel& w, const b2Transform& xf) {
    const double a1 = w.phase, a2 = w.phase + 1.2;
    const double s1 = std::sin(a1), s2 = std::sin(a2);
    double c1 = std::cos(a1), c2 = std::cos(a2);
    if (s1 > 0 && s2 > 0) return;
    if (s1 > 0) c1 = Sign(c1);
    if (s2 > 0) c2 = Sign(c2);
    const double local[4][2] = {{-kWheelW * kSize, +kWheelR * c1 * kSize},
                                {+kWheelW * kSize, +kWheelR * c1 * kSize},
                                {+kWheelW * kSize, +kWheelR * c2 * kSize},
                                {-kWheelW * kSize, +kWheelR * c2 * kSize}};
    std::array<double, 2> path[4];
    for (int v = 0; v < 4; ++v) {
      const b2Vec2 p = b2Mul(xf, V(local[v][0], local[v][1]));
      path[v] = {double(p.x), double(p.y)};
    }
    FillWorld(path, 4, kStripe, false);
  }

  void DrawIndicators() {  // gymnasium's _render_indicators, drawn after the flip (window coordinates)
    const double W = kWindowW, H = kWindowH, s = W / 40.0, h = H / 40.0;
    const double bar[4][2] = {{W, H}, {W, H - 5 * h}, {0, H - 5 * h}, {0, H}};
    canvas_.Fill(bar, 4, kBlack);
    const auto vertical = [&](double place, double val, Ink ink) {
      const double p[4][2] = {{place * s, H - (h + h * val)},
                              {(place + 1) * s, H - (h + h * val)},
                              {(place + 1) * s, H - h},
                              {(place + 0) * s, H - h}};
      canvas_.Fill(p, 4, ink);
    };
    const auto horizontal = [&](double place, double val, Ink ink) {
      const double p[4][2] = {{(place + 0) * s, H - 4 * h},
                              {(place + val) * s, H - 4 * h},
                              {(place + val) * s, H - 2 * h},
                              {(place + 0) * s, H - 2 * h}};
      canvas_.Fill(p, 4, ink);
    };
    const b2Vec2 v = hull_->GetLinearVelocity();
    const double speed = std::sqrt(double(v.x) * double(v.x) + double(v.y) * double(v.y));
    if (std::abs(speed) > 1e-4) vertical(5, 0.02 * speed, kWhite);
    for (int k = 0; k < 4; ++k) {
      const double omega = wheels_[k].omega;
      if (std::abs(omega) > 1e-4) vertical(7 + k, 0.01 * omega, k < 2 ? kBlue : kViolet);
    }
    const double steer = wheels_[0].joint->GetJointAngle();
    if (std::abs(steer) > 1e-4) horizontal(20, -10.0 * steer, kGreen);
    const double spin = hull_->GetAngularVelocity();
    if (std::abs(spin) > 1e-4) horizontal(30, -0.8 * spin, kRed);
  }

  void Write(Output& out) { std::copy(frame_.begin(), frame_.end(), out.Obs<uint8_t>(0)); }

  const bool continuous_, domain_randomize_;
  const double lap_complete_percent_;
  ContactRelay<CarRacingEnv> listener_;
  NumpyGenerator rng_;
  std::unique_ptr<b2World> world_;
  std::array<double, 3> road_color_{}, bg_color_{}, grass_color_{};
  double start_alpha_ = 0;
  std::vector<std::array<double, 4>> track_;  // (alpha, beta, x, y)
  std::vector<Tile> tiles_;
  std::vector<Poly> polys_;
  b2Body* hull_ = nullptr;
  std::array<Wheel, 4> wheels_;
  double reward_ = 0, prev_reward_ = 0, step_reward_ = 0, t_ = 0;
  int tile_visited_count_ = 0;
  bool new_lap_ = false, terminated_ = false;
  double cos_ = 1, sin_ = 0, zoom_ = 1, trans_[2] = {0, 0};
  Canvas canvas_;
  std::array<uint8_t, kStateW * kStateH * 3> frame_{};
  ActionLog log_;  // the episode's start and actions (GetState)
};

}  // namespace pp::box2d
