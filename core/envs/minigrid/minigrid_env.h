// The MiniGrid env base (minigrid 3.2.0's MiniGridEnv): the agent, its 7 actions, rewards, the partial view with
// occlusion, and the placement helpers the layouts are generated with. Every env of the family derives from it
// and writes only its GenGrid (and, for envs with their own rules, Act).
//
// Generation is exact: minigrid draws from gymnasium's np_random (numpy's PCG64 through SeedSequence), and so do
// we (NumpyGenerator, seeded with the env's seed exactly as reset(seed=...) seeds np_random), making the same
// draws in the same order. So seed s here and gymnasium.make(id).reset(seed=s) give the same episode.
//
// Observations follow EnvPool 1.2.5's layout: "direction" (int32), "image" (view x view x 3 uint8, indexed
// [x][y][channel] as minigrid's obs["image"]), "mission" (the mission string's bytes, zero-padded to
// mission_bytes); info "agent_pos" (x, y) and "mission_id" (the mission's index in its env's mission space).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/common/numpy_random.h"
#include "core/envs/minigrid/grid.h"

namespace pp::minigrid {

enum Action : int { kLeft = 0, kRight = 1, kForward = 2, kPickup = 3, kDrop = 4, kToggle = 5, kDone = 6 };

// minigrid's DIR_TO_VEC: right, down, left, up.
inline constexpr int kDirX[4] = {1, 0, -1, 0};
inline constexpr int kDirY[4] = {0, 1, 0, -1};

inline constexpr int64_t kNoLimit = std::numeric_limits<int64_t>::max();  // place_obj's max_tries=math.inf

// An env's state as plain values (GetState's layout, a snapshot's mission state): integers, positions, objects
// (7 values: Obj's fields) and strings (length, then one value per byte), written in order.
class StateWriter {
 public:
  explicit StateWriter(std::vector<double>& s) : s_(s) {}
  void Int(int64_t v) { s_.push_back(static_cast<double>(v)); }
  // cells as x, y pairs: {x0, y0, x1, y1, ...}
  void Cells(std::initializer_list<int> xy) {
    for (int v : xy) Int(v);
  }
  void Object(const Obj& o) {
    s_.insert(s_.end(), {double(o.type), double(o.color), double(o.state), double(o.in_type), double(o.in_color),
                         double(o.in_state), double(o.uid)});
  }
  void Text(const std::string& t) {
    Int(static_cast<int64_t>(t.size()));
    for (unsigned char ch : t) Int(ch);
  }

 private:
  std::vector<double>& s_;
};

// Reads what StateWriter wrote from s[at, end), in the same order. Every value is checked (an integer in its
// range, an object minigrid can hold, a position on the grid): anything else throws std::invalid_argument, so a
// state read this way can never index outside the grid or the env's lists.
class StateReader {
 public:
  StateReader(const std::vector<double>& s, size_t at, size_t end) : s_(s), at_(at), end_(end) {}
  int Int(int lo, int hi) {
    if (at_ >= end_) throw std::invalid_argument("MiniGrid state: too few values");
    const double v = s_[at_++];
    if (!(v >= lo && v <= hi) || v != static_cast<double>(static_cast<int>(v))) {
      throw std::invalid_argument("MiniGrid state: value " + std::to_string(at_ - 1) + " (" + std::to_string(v) +
                                  ") is not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    }
    return static_cast<int>(v);
  }
  std::pair<int, int> Pos(const Grid& grid) {
    const int x = Int(0, grid.width() - 1);
    return {x, Int(0, grid.height() - 1)};
  }
  // what StateWriter::Cells wrote, into {&x0, &y0, &x1, &y1, ...}
  void Cells(const Grid& grid, std::initializer_list<int*> xy) {
    for (auto it = xy.begin(); it != xy.end(); it += 2) std::tie(*it[0], *it[1]) = Pos(grid);
  }
  Obj Object() {
    Obj o;
    o.type = static_cast<uint8_t>(Int(kNone, kLava));
    o.color = static_cast<uint8_t>(Int(0, kGrey));
    o.state = static_cast<uint8_t>(Int(0, kLocked));
    o.in_type = static_cast<uint8_t>(Int(kNone, kLava));
    o.in_color = static_cast<uint8_t>(Int(0, kGrey));
    o.in_state = static_cast<uint8_t>(Int(0, kLocked));
    o.uid = static_cast<uint8_t>(Int(0, 255));
    return o;
  }
  std::string Text(int max_bytes) {
    std::string t(static_cast<size_t>(Int(0, max_bytes)), '\0');
    for (char& ch : t) ch = static_cast<char>(static_cast<unsigned char>(Int(0, 255)));
    return t;
  }
  // The reader has taken every value it was given.
  void End() const {
    if (at_ != end_) throw std::invalid_argument("MiniGrid state: " + std::to_string(end_ - at_) + " values too many");
  }

 private:
  const std::vector<double>& s_;
  size_t at_, end_;
};

class MiniGridEnv : public Env {
 public:
  // Keys every MiniGrid env has (EnvPool's names). Each env adds its own with MiniGridKeys({...}).
  static std::vector<ConfigKey> MiniGridKeys(std::vector<ConfigKey> own) {
    own.push_back({"agent_view_size", int64_t{7}, "side of the agent's square partial view (odd, >= 3)", {}});
    own.push_back({"mission_bytes", int64_t{96}, "length of the zero-padded mission bytes in obs['mission']", {}});
    return own;
  }
  // The envs whose start can be fixed (Empty, Dynamic-Obstacles): their own keys, then the agent_start_* keys.
  static std::vector<ConfigKey> AgentStartKeys(std::vector<ConfigKey> own) {
    own.push_back({"agent_start_x", int64_t{1}, "the agent's start column; -1: a random free cell", {}});
    own.push_back({"agent_start_y", int64_t{1}, "the agent's start row (with agent_start_x >= 0)", {}});
    own.push_back({"agent_start_dir", int64_t{0}, "the agent's start direction (with agent_start_x >= 0)", {}});
    return own;
  }
  // The spec every MiniGrid env shares; `num_actions` is 7, or 3 for the envs that only turn and move.
  static void MiniGridSpec(const Config& c, SpecBuilder& b, int num_actions = 7) {
    const int view = IntInRange(c, "agent_view_size", 3, 255);
    if (view % 2 == 0)
      throw std::invalid_argument("MiniGrid: agent_view_size must be odd, got " + std::to_string(view));
    const int mission_bytes = IntInRange(c, "mission_bytes", 1, 1 << 16);
    b.Obs("direction", DType::kInt32, {}, {0.0}, {3.0});
    b.Obs("image", DType::kUInt8, {view, view, 3}, {0.0}, {255.0});
    b.Obs("mission", DType::kUInt8, {mission_bytes}, {0.0}, {255.0});
    b.Info("agent_pos", DType::kInt32, {2});
    b.Info("mission_id", DType::kInt32);
    b.DiscreteAction(num_actions);
  }

  MiniGridEnv(const Config& c, int env_id, uint64_t seed, int width, int height, bool see_through_walls)
      : Env(c, env_id, seed),
        width_(width),
        height_(height),
        view_(c.Get<int>("agent_view_size")),
        mission_bytes_(c.Get<int>("mission_bytes")),
        max_steps_(c.Get<int>("max_episode_steps")),
        see_through_walls_(see_through_walls),
        rng_(seed) {
    grid_.Resize(width, height);
    mission_.reserve(256);
  }

  void Reset(Output& out) override {
    agent_x_ = agent_y_ = -1;
    agent_dir_ = -1;
    grid_.Clear();
    mission_id_ = 0;
    GenGrid();
    if (agent_x_ < 0 || agent_dir_ < 0) throw std::logic_error("MiniGrid: GenGrid placed no agent");
    carrying_ = Obj{};
    step_count_ = 0;
    WriteObs(out);
    AfterReset();
  }

  void Step(const ActionView& action, Output& out) override {
    double reward = 0.0;
    bool terminated = false;
    Act(action.Discrete(), reward, terminated);
    out.SetReward(reward);
    out.SetTerminated(terminated);
    // Levels whose limit changes per episode (BabyAI) end it themselves; the pool's limit bounds them all.
    if (!terminated && step_count_ >= max_steps_) out.SetTruncated(true);
    WriteObs(out);
  }

  // State for the alignment tests (put the Python env's grid into ours): width, height, agent x, y, dir,
  // step_count, the carried object (7 values, Obj's fields), then every cell row-major (y outer) as 7 values,
  // then the env's own extra values (ExtraState).
  std::vector<double> GetState() const override {
    std::vector<double> s;
    StateWriter w(s);
    w.Int(width_);
    w.Int(height_);
    w.Cells({agent_x_, agent_y_});
    w.Int(agent_dir_);
    w.Int(step_count_);
    w.Object(carrying_);
    for (int y = 0; y < height_; ++y) {
      for (int x = 0; x < width_; ++x) w.Object(grid_.Get(x, y));
    }
    for (double v : ExtraState()) s.push_back(v);
    return s;
  }
  void SetState(const std::vector<double>& s) override {
    const size_t base = 6 + kObjValues + kObjValues * static_cast<size_t>(width_) * height_;
    if (s.size() < base || s[0] != width_ || s[1] != height_) {
      throw std::invalid_argument("MiniGrid state: expected width, height = " + std::to_string(width_) + ", " +
                                  std::to_string(height_) + " and at least " + std::to_string(base) + " values");
    }
    StateReader r(s, 2, base);
    const auto [ax, ay] = r.Pos(grid_);
    // a step count at or past max_steps ends the episode at the next step (Step truncates): one below int's top
    // leaves that step room to count without overflowing
    const int dir = r.Int(0, 3), step_count = r.Int(0, std::numeric_limits<int>::max() - 1);
    const Obj carrying = r.Object();
    std::vector<Obj> cells(static_cast<size_t>(width_) * height_);
    for (Obj& cell : cells) cell = r.Object();
    SetExtraState(std::vector<double>(s.begin() + static_cast<std::ptrdiff_t>(base), s.end()));
    agent_x_ = ax;
    agent_y_ = ay;
    agent_dir_ = dir;
    step_count_ = step_count;
    carrying_ = carrying;
    for (int y = 0; y < height_; ++y) {
      for (int x = 0; x < width_; ++x) grid_.Set(x, y, cells[static_cast<size_t>(y) * width_ + x]);
    }
  }
  // Snapshots: GetState's values, the mission's own state (the mission string, its id and what the env checks the
  // mission with: SaveMission) and the numpy generator (not gen_, which the pool saves itself). Layout:
  // [kSnapshotVersion, n, GetState's n values, m, the mission's m values, the generator's 10 words].
  static constexpr int kSnapshotVersion = 2;  // 1 (no version value) had no mission state
  std::vector<double> SaveState() const override {
    const std::vector<double> state = GetState();
    std::vector<double> mission;
    StateWriter w(mission);
    w.Text(mission_);
    w.Int(mission_id_);
    SaveMission(w);
    std::vector<double> s = {kSnapshotVersion, static_cast<double>(state.size())};
    s.insert(s.end(), state.begin(), state.end());
    s.push_back(static_cast<double>(mission.size()));
    s.insert(s.end(), mission.begin(), mission.end());
    for (double v : rng_.StateWords()) s.push_back(v);
    return s;
  }
  // Every value is checked; when one is bad this throws, and the engine puts the env's previous snapshot back
  // (Engine::Restore), so a half-loaded state is never seen.
  void LoadState(const std::vector<double>& s) override {
    if (s.size() < 3 + NumpyGenerator::kStateWords || s[0] != kSnapshotVersion) {
      throw std::invalid_argument("not a MiniGrid snapshot of this version (" + std::to_string(kSnapshotVersion) +
                                  "): take it with get_state(env_ids) of this build");
    }
    const int most = static_cast<int>(std::min<size_t>(s.size(), std::numeric_limits<int>::max()));
    const size_t n = static_cast<size_t>(StateReader(s, 1, 2).Int(0, most - 3));
    const size_t m = static_cast<size_t>(StateReader(s, 2 + n, 3 + n).Int(0, most));
    if (s.size() != 3 + n + m + NumpyGenerator::kStateWords) {
      throw std::invalid_argument("MiniGrid snapshot: " + std::to_string(s.size()) + " values, its sizes say " +
                                  std::to_string(3 + n + m + NumpyGenerator::kStateWords));
    }
    NumpyGenerator rng;
    rng.SetStateWords(s, 3 + n + m);
    StateReader r(s, 3 + n, 3 + n + m);
    const std::string mission = r.Text(kMaxMissionBytes);
    const int mission_id = r.Int(-1, std::numeric_limits<int32_t>::max());
    SetState(std::vector<double>(s.begin() + 2, s.begin() + 2 + static_cast<std::ptrdiff_t>(n)));
    LoadMission(r);
    r.End();
    mission_ = mission;
    mission_id_ = mission_id;
    rng_ = rng;
  }

 protected:
  // Builds the layout: walls and objects into grid_, the agent (agent_x_, agent_y_, agent_dir_), mission_.
  virtual void GenGrid() = 0;
  // One step's rules; the default is MiniGridEnv.step's.
  virtual void Act(int action, double& reward, bool& terminated) { BaseAct(action, reward, terminated); }
  // After the first observation of an episode is written (minigrid envs that change the state after reset's obs).
  virtual void AfterReset() {}
  // GetState's values beyond the grid and the agent (what moves during an episode: Dynamic-Obstacles' balls).
  virtual std::vector<double> ExtraState() const { return {}; }
  virtual void SetExtraState(const std::vector<double>& extra) {
    if (!extra.empty()) throw std::invalid_argument("MiniGrid state: unexpected extra values");
  }
  // A snapshot's mission state beyond the mission string and id: what GenGrid chose that the env's step checks
  // (a target object or cell, BabyAI's instruction and its verifier's progress). LoadMission reads it back in the
  // same order (StateReader checks every value).
  virtual void SaveMission(StateWriter& w) const { (void)w; }
  virtual void LoadMission(StateReader& r) { (void)r; }

  void Reseeded(uint64_t seed) override { rng_.Seed(seed); }
  // An env rebuilt by set_config goes on drawing layouts from the numpy generator where the env it replaces was.
  void GeneratorAdopted(const Env& from) override {
    if (const auto* prev = dynamic_cast<const MiniGridEnv*>(&from)) rng_ = prev->rng_;
  }

  // MiniGridEnv.step without the bookkeeping the pool does (step limit, truncation).
  void BaseAct(int action, double& reward, bool& terminated) {
    ++step_count_;
    const int fx = agent_x_ + kDirX[agent_dir_], fy = agent_y_ + kDirY[agent_dir_];
    const Obj fwd = grid_.InBounds(fx, fy) ? grid_.Get(fx, fy) : Wall();
    switch (action) {
      case kLeft: agent_dir_ = (agent_dir_ + 3) % 4; break;
      case kRight: agent_dir_ = (agent_dir_ + 1) % 4; break;
      case kForward:
        if (fwd.none() || fwd.CanOverlap()) {
          agent_x_ = fx;
          agent_y_ = fy;
        }
        if (fwd.type == kGoal) {
          terminated = true;
          reward = Reward();
        }
        if (fwd.type == kLava) terminated = true;
        break;
      case kPickup:
        if (!fwd.none() && fwd.CanPickup() && carrying_.none()) {
          carrying_ = fwd;
          grid_.Set(fx, fy, Obj{});
        }
        break;
      case kDrop:
        if (fwd.none() && !carrying_.none()) {
          grid_.Set(fx, fy, carrying_);
          carrying_ = Obj{};
        }
        break;
      case kToggle:
        if (!fwd.none()) Toggle(fx, fy);
        break;
      default:  // kDone: nothing
        break;
    }
  }

  // WorldObj.toggle: a locked door opens with a key of its color, an unlocked one opens or closes; a box turns
  // into its contents. Returns whether anything happened.
  bool Toggle(int x, int y) {
    Obj& o = grid_.At(x, y);
    if (o.type == kDoor) {
      if (o.state == kLocked) {
        if (carrying_.type == kKey && carrying_.color == o.color) {
          o.state = kOpen;
          return true;
        }
        return false;
      }
      o.state = o.state == kOpen ? kClosed : kOpen;
      return true;
    }
    if (o.type == kBox) {
      o = o.Contents();
      return true;
    }
    return false;
  }

  double Reward() const { return 1.0 - 0.9 * (static_cast<double>(step_count_) / max_steps_); }

  // The step of the go-to missions (GoToObject, GoToDoor): toggle ends the episode; done ends it too, and wins when
  // the agent stands next to the target (not diagonally).
  void GoToAct(int action, double& reward, bool& terminated, int target_x, int target_y) {
    BaseAct(action, reward, terminated);
    if (action == kToggle) terminated = true;
    if (action == kDone) {
      const int dx = std::abs(agent_x_ - target_x), dy = std::abs(agent_y_ - target_y);
      if ((dx == 0 && dy == 1) || (dy == 0 && dx == 1)) reward = Reward();
      terminated = true;
    }
  }
  // The step of the pick-up missions (KeyCorridor, UnlockPickup): picking up the target wins.
  void PickUpAct(int action, double& reward, bool& terminated, const Obj& target) {
    BaseAct(action, reward, terminated);
    if (action == kPickup && carrying_ == target) {
      reward = Reward();
      terminated = true;
    }
  }

  // The agent_start_* keys' values; PlaceAgentAtStart puts the agent there (x = -1: on a random free cell).
  struct AgentStart {
    int x, y, dir;
  };
  static AgentStart ReadAgentStart(const Config& c) {
    return {c.Get<int>("agent_start_x"), c.Get<int>("agent_start_y"), c.Get<int>("agent_start_dir")};
  }
  void PlaceAgentAtStart(const AgentStart& s) {
    if (s.x >= 0) {
      agent_x_ = s.x;
      agent_y_ = s.y;
      agent_dir_ = s.dir;
    } else {
      PlaceAgent();
    }
  }

  // The object kinds minigrid draws from, in its order (["key", "ball", "box"]: add_object, GoToObject, PutNear,
  // Playground), and a kind's index in that list (EnvPool's mission ids count types in this order).
  static constexpr uint8_t kKinds[3] = {kKey, kBall, kBox};
  static int KindIndex(uint8_t type) { return type == kKey ? 0 : (type == kBall ? 1 : 2); }

  // An object and where it was placed.
  struct Placed {
    Obj obj;
    int x, y;
  };
  // `n` distinct objects (a key, ball or box, and a colour; a pair already drawn is drawn again), each placed
  // anywhere with place_obj(reject=`reject`), as GoToObject and PutNear generate them.
  template <typename Reject>
  void PlaceDistinctObjects(int n, std::vector<Placed>& placed, Reject reject) {
    placed.clear();
    while (static_cast<int>(placed.size()) < n) {
      const uint8_t type = kKinds[RandInt(0, 3)];
      const uint8_t color = RandColor();
      bool seen = false;
      for (const auto& o : placed) seen |= o.obj.type == type && o.obj.color == color;
      if (seen) continue;
      const Obj obj = Obj::Make(type, color);
      const auto [x, y] = PlaceObjIf(obj, 0, 0, width_, height_, reject);
      placed.push_back({obj, x, y});
    }
  }

  // The walled square with the agent at (1, 1) facing right and the goal in the opposite corner (Crossing, LavaGap).
  void WalledSquareWithGoal() {
    grid_.WallRect(0, 0, width_, height_);
    agent_x_ = agent_y_ = 1;
    agent_dir_ = 0;
    grid_.Set(width_ - 2, height_ - 2, Goal());
  }

  // The outer walls and an n x n grid of rooms (FourRooms, Playground), row by row as minigrid builds it: each room's
  // right then bottom wall (the last column and row have none) gets one opening, at a random cell from the room's
  // first inner cell to `inset` cells before the next wall, holding `opening()` (drawn after the position).
  template <typename Opening>
  void RoomsGrid(int n, int inset, Opening opening) {
    grid_.WallRect(0, 0, width_, height_);
    const int room_w = width_ / n, room_h = height_ / n;
    for (int j = 0; j < n; ++j) {
      for (int i = 0; i < n; ++i) {
        const int xl = i * room_w, yt = j * room_h, xr = xl + room_w, yb = yt + room_h;
        if (i + 1 < n) {
          grid_.VertWall(xr, yt, room_h);
          const int y = RandInt(yt + 1, yb - inset);
          grid_.Set(xr, y, opening());
        }
        if (j + 1 < n) {
          grid_.HorzWall(xl, yb, room_w);
          const int x = RandInt(xl + 1, xr - inset);
          grid_.Set(x, yb, opening());
        }
      }
    }
  }

  // np_random draws, named as minigrid names them.
  int RandInt(int64_t low, int64_t high) { return static_cast<int>(rng_.Integers(low, high)); }
  bool RandBool() { return rng_.Integers(0, 2) == 0; }
  uint8_t RandColor() { return kColorNames[RandInt(0, 6)]; }

  // place_obj: rejection-samples an empty cell (not the agent's) in the rectangle at top of the given size
  // (clipped to the grid); `reject(x, y)` filters more. Returns false when max_tries draws all failed
  // (minigrid raises there).
  template <typename Reject>
  bool TryPlaceObj(const Obj& obj, int top_x, int top_y, int size_x, int size_y, int64_t max_tries, Reject reject,
                   int& out_x, int& out_y) {
    top_x = std::max(top_x, 0);
    top_y = std::max(top_y, 0);
    int64_t tries = 0;
    while (true) {
      if (tries > max_tries) return false;
      ++tries;
      const int x = RandInt(top_x, std::min(top_x + size_x, width_));
      const int y = RandInt(top_y, std::min(top_y + size_y, height_));
      if (!grid_.Get(x, y).none()) continue;
      if (x == agent_x_ && y == agent_y_) continue;
      if (reject(x, y)) continue;
      if (!obj.none()) grid_.Set(x, y, obj);
      out_x = x;
      out_y = y;
      return true;
    }
  }
  std::pair<int, int> PlaceObj(const Obj& obj, int top_x = 0, int top_y = 0, int size_x = -1, int size_y = -1) {
    return PlaceObjIf(obj, top_x, top_y, size_x, size_y, [](int, int) { return false; });
  }
  template <typename Reject>
  std::pair<int, int> PlaceObjIf(const Obj& obj, int top_x, int top_y, int size_x, int size_y, Reject reject) {
    if (size_x < 0) size_x = width_;
    if (size_y < 0) size_y = height_;
    int x = -1, y = -1;
    TryPlaceObj(obj, top_x, top_y, size_x, size_y, kNoLimit, reject, x, y);
    return {x, y};
  }
  // place_agent: a free cell for the agent, then (rand_dir) a random direction.
  std::pair<int, int> PlaceAgent(int top_x = 0, int top_y = 0, int size_x = -1, int size_y = -1, bool rand_dir = true) {
    TryPlaceAgent(top_x, top_y, size_x < 0 ? width_ : size_x, size_y < 0 ? height_ : size_y, rand_dir, kNoLimit);
    return {agent_x_, agent_y_};
  }
  // place_agent with max_tries: false when every draw failed (minigrid raises RecursionError there), the agent
  // then at (-1, -1) as minigrid leaves it.
  bool TryPlaceAgent(int top_x, int top_y, int size_x, int size_y, bool rand_dir, int64_t max_tries) {
    agent_x_ = agent_y_ = -1;
    int x = -1, y = -1;
    if (!TryPlaceObj(Obj{}, top_x, top_y, size_x, size_y, max_tries, [](int, int) { return false; }, x, y)) {
      return false;
    }
    agent_x_ = x;
    agent_y_ = y;
    if (rand_dir) agent_dir_ = RandInt(0, 4);
    return true;
  }

  int width_, height_, view_, mission_bytes_, max_steps_;
  bool see_through_walls_;
  NumpyGenerator rng_;
  Grid grid_;
  int agent_x_ = -1, agent_y_ = -1, agent_dir_ = -1;
  Obj carrying_;
  int step_count_ = 0;
  std::string mission_;
  int mission_id_ = 0;

 private:
  static constexpr size_t kObjValues = 7;  // StateWriter::Object's values
  static constexpr int kMaxMissionBytes = 1 << 16;

  // gen_obs: the view in front of the agent (rotated so the agent looks up from the bottom middle cell), cells
  // outside the grid as walls, occlusion by process_vis unless see_through_walls, the carried object in the
  // agent's own cell, then the encoding; invisible cells are (0, 0, 0).
  void WriteObs(Output& out) {
    const int v = view_, half = view_ / 2;
    const size_t cells = static_cast<size_t>(v) * v;
    ViewScratch& sc = Scratch(cells);
    Obj* view = sc.cells.data();
    uint8_t* vis = sc.vis.data();
    const int fx = kDirX[agent_dir_], fy = kDirY[agent_dir_];
    const int rx = -fy, ry = fx;  // right_vec
    for (int j = 0; j < v; ++j) {
      for (int i = 0; i < v; ++i) {
        const int wx = agent_x_ + fx * (v - 1 - j) + rx * (i - half);
        const int wy = agent_y_ + fy * (v - 1 - j) + ry * (i - half);
        view[j * v + i] = grid_.InBounds(wx, wy) ? grid_.Get(wx, wy) : Wall();
      }
    }
    if (see_through_walls_) {
      std::fill_n(vis, cells, uint8_t{1});
    } else {
      ProcessVis(view, vis, v, half, v - 1);
    }
    view[(v - 1) * v + half] = carrying_;
    uint8_t* image = sc.image.data();
    for (int i = 0; i < v; ++i) {
      for (int j = 0; j < v; ++j) {
        uint8_t* px = image + (static_cast<size_t>(i) * v + j) * 3;
        if (!vis[j * v + i]) {
          px[0] = px[1] = px[2] = 0;
          continue;
        }
        const Obj& o = view[j * v + i];
        px[0] = o.none() ? uint8_t{kEmpty} : o.type;
        px[1] = o.none() ? 0 : o.color;
        px[2] = o.type == kDoor ? o.state : 0;
      }
    }
    std::memcpy(out.Obs<uint8_t>(1), image, cells * 3);
    *out.Obs<int32_t>(0) = agent_dir_;
    uint8_t* mission = out.Obs<uint8_t>(2);
    const size_t n = std::min(mission_.size(), static_cast<size_t>(mission_bytes_));
    std::memcpy(mission, mission_.data(), n);
    std::memset(mission + n, 0, static_cast<size_t>(mission_bytes_) - n);
    int32_t* pos = out.Info<int32_t>(0);
    pos[0] = agent_x_;
    pos[1] = agent_y_;
    *out.Info<int32_t>(1) = mission_id_;
  }

  // The view's cells, their visibility and the encoded image: scratch of one observation, kept per thread, not per
  // env. In a pool of 256 envs, per-env buffers and an image written byte by byte into the pool's row missed the
  // cache on every step (the row's stores stalled the next ones); built here, the image reaches the row in one copy.
  struct ViewScratch {
    std::vector<Obj> cells;
    std::vector<uint8_t> vis, image;
  };
  static ViewScratch& Scratch(size_t cells) {
    static thread_local ViewScratch sc;
    if (sc.cells.size() < cells) {
      sc.cells.resize(cells);
      sc.vis.resize(cells);
      sc.image.resize(cells * 3);
    }
    return sc;
  }

  // Grid.process_vis: visibility spreads from the agent's cell row by row away from it, sideways and diagonally
  // forward, through cells that can be seen behind.
  static void ProcessVis(const Obj* view, uint8_t* vis_out, int v, int ax, int ay) {
    std::fill_n(vis_out, static_cast<size_t>(v) * v, uint8_t{0});
    auto vis = [&](int i, int j) -> uint8_t& { return vis_out[j * v + i]; };
    auto cell = [&](int i, int j) -> const Obj& { return view[j * v + i]; };
    vis(ax, ay) = 1;
    for (int j = v - 1; j >= 0; --j) {
      for (int i = 0; i < v - 1; ++i) {
        if (!vis(i, j)) continue;
        const Obj& c = cell(i, j);
        if (!c.none() && !c.SeeBehind()) continue;
        vis(i + 1, j) = 1;
        if (j > 0) {
          vis(i + 1, j - 1) = 1;
          vis(i, j - 1) = 1;
        }
      }
      for (int i = v - 1; i >= 1; --i) {
        if (!vis(i, j)) continue;
        const Obj& c = cell(i, j);
        if (!c.none() && !c.SeeBehind()) continue;
        vis(i - 1, j) = 1;
        if (j > 0) {
          vis(i - 1, j - 1) = 1;
          vis(i, j - 1) = 1;
        }
      }
    }
  }
};

}  // namespace pp::minigrid
