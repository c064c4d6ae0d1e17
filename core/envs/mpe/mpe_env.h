// The Multi Particle Environments (Farama's mpe2 1.1.1): the particle world (mpe2's _mpe_utils/core.py World) and
// the env around it (_mpe_utils/simple_env.py SimpleEnv as pettingzoo's parallel_env runs it). Each scenario
// (simple.h, simple_spread.h, ...) derives from MpeEnv and writes only its world, its reset draws, its rewards and
// its observations.
//
// Agents are player rows, in mpe2's possible_agents order; where a scenario's agents differ, every row has the largest
// agent's shapes (observations padded with zeros, info obs_size says how many values are the agent's own; an agent
// reads its own prefix of an action row) and the spec's player table names each agent with its own sizes (MpeSpec).
// One step of the pool is one step of the parallel env:
// every agent's action is set, the world steps once, then every agent gets its reward (blended with the scenario's
// global reward by local_ratio where the scenario has one) and its observation. The episode is truncated after
// max_cycles steps, as mpe2 does (terminated only where the scenario ends early on success).
//
// Arithmetic follows numpy operation by operation, in float64 (the extension is built with -ffp-contract=off, so
// no multiply-add is fused where numpy rounds twice); observations are cast to float32 at the end, as mpe2's
// observe() does. Randomness: reset draws from a bit-exact copy of numpy's default Generator, seeded with the
// env's seed as env.reset(seed=...) seeds mpe2's np_random, in the scenario's order; an episode without a new seed
// continues that generator, as mpe2's reset() without a seed does.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/common/numpy_random.h"

namespace pp::mpe {

// One particle (an agent or a landmark): mpe2's Entity with its EntityState.
struct Entity {
  double pos[2] = {0.0, 0.0};
  double vel[2] = {0.0, 0.0};
  double size = 0.05;
  bool movable = false;
  bool collide = true;
  double mass = 1.0;
  double max_speed = -1.0;  // < 0: none (mpe2's None)
  double accel = -1.0;      // < 0: none, the action's sensitivity is 5
  double color[3] = {0.0, 0.0, 0.0};
};

// mpe2's World: agents first, then landmarks (World.entities' order, which the collision loop follows).
class World {
 public:
  static constexpr double kDt = 0.1;
  static constexpr double kDamping = 0.25;
  static constexpr double kContactForce = 1e2;
  static constexpr double kContactMargin = 1e-3;

  // num_agents agents (movable, colliding, not silent, as mpe2's Agent()) and num_landmarks landmarks.
  void Build(int num_agents, int num_landmarks, int dim_c) {
    num_agents_ = num_agents;
    dim_c_ = dim_c;
    entities_.assign(static_cast<size_t>(num_agents + num_landmarks), Entity{});
    for (int i = 0; i < num_agents; ++i) entities_[static_cast<size_t>(i)].movable = true;
    silent_.assign(static_cast<size_t>(num_agents), false);
    u_.assign(static_cast<size_t>(num_agents) * 2, 0.0);
    action_c_.assign(static_cast<size_t>(num_agents) * std::max(dim_c, 0), 0.0);
    c_ = action_c_;
    force_.assign(entities_.size() * 2, 0.0);
    has_force_.assign(entities_.size(), false);
  }

  int num_agents() const { return num_agents_; }
  int num_landmarks() const { return static_cast<int>(entities_.size()) - num_agents_; }
  int num_entities() const { return static_cast<int>(entities_.size()); }
  int dim_c() const { return dim_c_; }
  Entity& agent(int i) { return entities_[static_cast<size_t>(i)]; }
  const Entity& agent(int i) const { return entities_[static_cast<size_t>(i)]; }
  Entity& landmark(int i) { return entities_[static_cast<size_t>(num_agents_ + i)]; }
  const Entity& landmark(int i) const { return entities_[static_cast<size_t>(num_agents_ + i)]; }
  Entity& entity(int i) { return entities_[static_cast<size_t>(i)]; }
  const Entity& entity(int i) const { return entities_[static_cast<size_t>(i)]; }
  bool silent(int i) const { return silent_[static_cast<size_t>(i)]; }
  void set_silent(int i, bool s) { silent_[static_cast<size_t>(i)] = s; }
  // Agent i's physical action (Action.u) and communication action (Action.c), set before Step.
  double* u(int i) { return &u_[static_cast<size_t>(i) * 2]; }
  // (data() + offset: the arrays are empty in worlds without communication)
  double* action_c(int i) { return action_c_.data() + static_cast<size_t>(i) * dim_c_; }
  // Agent i's utterance (AgentState.c).
  double* c(int i) { return c_.data() + static_cast<size_t>(i) * dim_c_; }
  const double* c(int i) const { return c_.data() + static_cast<size_t>(i) * dim_c_; }

  // World.step: action forces, collision forces, integration, then each agent's utterance. No scenario of this
  // family sets u_noise or c_noise (the noise terms are 0.0, whose addition is kept for its rounding of -0.0).
  void Step() {
    std::fill(has_force_.begin(), has_force_.end(), false);
    for (int i = 0; i < num_agents_; ++i) {
      if (!entities_[static_cast<size_t>(i)].movable) continue;
      Force(i)[0] = u(i)[0] + 0.0;
      Force(i)[1] = u(i)[1] + 0.0;
      has_force_[static_cast<size_t>(i)] = true;
    }
    const int n = num_entities();
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        const Entity& ea = entities_[static_cast<size_t>(a)];
        const Entity& eb = entities_[static_cast<size_t>(b)];
        if (!ea.collide || !eb.collide) continue;
        double f[2];
        CollisionForce(ea, eb, f);
        if (ea.movable) AddForce(a, f[0], f[1]);
        if (eb.movable) AddForce(b, -f[0], -f[1]);
      }
    }
    for (int i = 0; i < n; ++i) {
      Entity& e = entities_[static_cast<size_t>(i)];
      if (!e.movable) continue;
      for (int k = 0; k < 2; ++k) e.pos[k] += e.vel[k] * kDt;
      for (int k = 0; k < 2; ++k) e.vel[k] = e.vel[k] * (1 - kDamping);
      if (has_force_[static_cast<size_t>(i)]) {
        for (int k = 0; k < 2; ++k) e.vel[k] += (Force(i)[k] / e.mass) * kDt;
      }
      if (e.max_speed >= 0.0) {
        const double speed = std::sqrt(e.vel[0] * e.vel[0] + e.vel[1] * e.vel[1]);
        if (speed > e.max_speed) {
          for (int k = 0; k < 2; ++k) e.vel[k] = e.vel[k] / speed * e.max_speed;
        }
      }
    }
    for (int i = 0; i < num_agents_; ++i) {
      for (int k = 0; k < dim_c_; ++k) c(i)[k] = silent(i) ? 0.0 : action_c(i)[k] + 0.0;
    }
  }

  // np.sqrt(np.sum(np.square(a.pos - b.pos))).
  static double Dist(const Entity& a, const Entity& b) { return std::sqrt(Dist2(a, b)); }
  // np.sum(np.square(a.pos - b.pos)).
  static double Dist2(const Entity& a, const Entity& b) {
    const double dx = a.pos[0] - b.pos[0], dy = a.pos[1] - b.pos[1];
    return dx * dx + dy * dy;
  }

 private:
  double* Force(int i) { return &force_[static_cast<size_t>(i) * 2]; }
  // p_force[i] = f + p_force[i], p_force[i] starting at 0.0 when nothing acted on the entity yet.
  void AddForce(int i, double fx, double fy) {
    double* f = Force(i);
    const bool had = has_force_[static_cast<size_t>(i)];
    f[0] = fx + (had ? f[0] : 0.0);
    f[1] = fy + (had ? f[1] : 0.0);
    has_force_[static_cast<size_t>(i)] = true;
  }
  // numpy's npy_logaddexp(0, y), term by term (it is what np.logaddexp computes for float64).
  static double LogAddExp0(double y) {
    constexpr double kLogE2 = 0.693147180559945309417232121458176568;
    const double x = 0.0;
    if (x == y) return x + kLogE2;
    const double tmp = x - y;
    if (tmp > 0) return x + std::log1p(std::exp(-tmp));
    if (tmp <= 0) return y + std::log1p(std::exp(tmp));
    return tmp;  // NaN
  }
  // World.get_collision_force's force on a (b gets its negation): a soft contact whose penetration is a softplus
  // of the overlap, scaled by the contact margin.
  static void CollisionForce(const Entity& a, const Entity& b, double* f) {
    const double delta[2] = {a.pos[0] - b.pos[0], a.pos[1] - b.pos[1]};
    const double dist = std::sqrt(delta[0] * delta[0] + delta[1] * delta[1]);
    const double dist_min = a.size + b.size;
    const double k = kContactMargin;
    const double penetration = LogAddExp0(-(dist - dist_min) / k) * k;
    for (int i = 0; i < 2; ++i) f[i] = kContactForce * delta[i] / dist * penetration;
  }

  int num_agents_ = 0;
  int dim_c_ = 0;
  std::vector<Entity> entities_;
  std::vector<bool> silent_;
  std::vector<double> u_, action_c_, c_;
  std::vector<double> force_;
  std::vector<bool> has_force_;
};

// An agent's action layout in mpe2 (SimpleEnv.__init__): a movable agent moves (5 choices: none, -x, +x, -y, +y),
// an agent that is not silent speaks (dim_c choices). Discrete: one number, move + 5 * say. Continuous: a
// Box(0, 1) vector of the move's 5 then the utterance's dim_c values.
struct ActionLayout {
  bool movable = true;
  bool silent = true;
  int dim_c = 0;
  int DiscreteN() const { return (movable ? 5 : 1) * (silent ? 1 : dim_c); }
  int ContinuousDim() const { return (movable ? 5 : 0) + (silent ? 0 : dim_c); }
};

// One agent as mpe2 declares it: its name, its observation's size and its action layout.
struct AgentSpec {
  std::string name;
  int obs_size = 0;
  ActionLayout action;
};

// n agents named prefix_0 .. prefix_{n-1} with the same spaces.
inline std::vector<AgentSpec> SameAgents(const std::string& prefix, int n, int obs_size, const ActionLayout& action) {
  std::vector<AgentSpec> agents;
  for (int i = 0; i < n; ++i) agents.push_back({prefix + "_" + std::to_string(i), obs_size, action});
  return agents;
}

// The config keys every scenario has (mpe2's constructor arguments), and the player count, which is the scenario's.
inline std::vector<ConfigKey> MpeConfigKeys(std::vector<ConfigKey> own) {
  own.push_back({"max_cycles", int64_t{25}, "steps per episode; the episode is truncated after them", {}});
  own.push_back({"continuous_actions",
                 false,
                 "False: Discrete actions (move + 5 * say); True: Box(0, 1) vectors (5 move values, then say)",
                 {}});
  // the engine's key (at least 1), whose value this family does not need: the scenario fixes the player count
  own.push_back(
      {"max_num_players", int64_t{1}, "the agent count is the scenario's: leave this at 1 or give that count", {}});
  return own;
}

// The spec of every scenario: one player row per agent, float32 observations of the largest agent's size (each row
// holds its agent's observation, then zeros: info "obs_size" says how many values are its own), float64 rewards
// (mpe2's are Python floats), and Discrete(largest n) or Box(0, 1, (largest dim,)) actions. Each agent's name and
// its own sizes go in the spec's player table, from which the PettingZoo face gives mpe2's per-agent spaces.
inline void MpeSpec(const Config& c, SpecBuilder& b, const std::string& scenario,
                    const std::vector<AgentSpec>& agents) {
  IntInRange(c, "max_cycles", 1, std::numeric_limits<int>::max() - 1);
  const int num_agents = static_cast<int>(agents.size());
  const int64_t players = c.Get<int64_t>("max_num_players");
  if (players != 1 && players != num_agents) {
    throw std::invalid_argument("config key 'max_num_players' must be 1 (the default) or " +
                                std::to_string(num_agents) + " (" + scenario + "'s agent count), got " +
                                std::to_string(players));
  }
  const bool continuous = c.Get<bool>("continuous_actions");
  int obs_dim = 0, action_size = 0;
  for (const AgentSpec& a : agents) {
    obs_dim = std::max(obs_dim, a.obs_size);
    action_size = std::max(action_size, continuous ? a.action.ContinuousDim() : a.action.DiscreteN());
  }
  b.Obs("obs", DType::kFloat32, {obs_dim}, {-kInf}, {kInf});
  if (continuous) {
    b.Action("action", DType::kFloat32, {action_size}, {0.0}, {1.0});
  } else {
    b.DiscreteAction(action_size);
  }
  b.Info("obs_size", DType::kInt32, {}, /*per_player=*/true);
  b.Reward(DType::kFloat64);
  b.MaxPlayers(num_agents);
  for (const AgentSpec& a : agents) {
    b.Player(a.name, a.obs_size, continuous ? a.action.ContinuousDim() : a.action.DiscreteN());
  }
}

// A scenario's neighbor key (mpe2's num_agent_neighbors / num_landmark_neighbors): the observation slots it gives,
// all `all` entities when 0 (mpe2's None), else that many (zero-padded past the entities there are).
inline int NeighborSlots(const Config& c, const std::string& key, int all) {
  const int n = IntInRange(c, key, 0, 256);
  return n == 0 ? all : n;
}

// What an agent observes of one kind of entity (mpe2's num_*_neighbors keys): every one in mpe2's order (nearest
// false), or the `slots` nearest; `slots` entities' room in the observation either way.
struct Neighbors {
  bool nearest = false;
  int slots = 0;
};
inline Neighbors NeighborsOf(const Config& c, const std::string& key, int all) {
  return {IntInRange(c, key, 0, 256) > 0, NeighborSlots(c, key, all)};
}

// A scenario's local_ratio key: a proportion (mpe2 asserts 0 <= local_ratio <= 1).
inline double LocalRatio(const Config& c) {
  const double r = c.Get<double>("local_ratio");
  if (!(r >= 0.0 && r <= 1.0)) {
    throw std::invalid_argument("config key 'local_ratio' must be in [0, 1], got " + std::to_string(r));
  }
  return r;
}

// np.exp of a float64: libm's exp, which is numpy's on CPUs without AVX-512. On AVX-512 CPUs numpy calls Intel's SVML
// instead, whose last bit differs for a few percent of arguments (docs/mpe.md).
inline double NumpyExp(double x) { return std::exp(x); }

// bound(x) of simple_tag and simple_world_comm: a good agent's penalty for a coordinate of magnitude x past 0.9
// (Python's min(np.exp(2 * x - 2), 10): the exponential unless 10 is smaller).
inline double ScreenPenalty(double x) {
  if (x < 0.9) return 0;
  if (x < 1.0) return (x - 0.9) * 10;
  return std::min(NumpyExp(2 * x - 2), 10.0);
}

// The env: SimpleEnv's step and reset around a scenario.
class MpeEnv : public Env {
 public:
  int NumPlayers() const override { return world_.num_agents(); }

  void Reset(Output& out) override {
    steps_ = 0;
    ResetWorld();
    WriteObs(out);
  }

  void Step(const ActionView& action, Output& out) override {
    if (!continuous_) CheckDiscreteActions(action);
    for (int i = 0; i < world_.num_agents(); ++i) SetAction(i, action);
    world_.Step();
    const double global = local_ratio_ >= 0.0 ? GlobalReward() : 0.0;
    for (int i = 0; i < world_.num_agents(); ++i) {
      const double r = Reward(i);
      out.SetReward(local_ratio_ >= 0.0 ? global * (1 - local_ratio_) + r * local_ratio_ : r, i);
    }
    ++steps_;
    if (steps_ >= max_cycles_) {
      out.SetTruncated(true);
    } else if (IsTerminal()) {
      out.SetTerminated(true);
    }
    WriteObs(out);
  }

  // The world's state: [steps, then per entity (agents, then landmarks) pos x, y and vel x, y, then per agent its
  // utterance (dim_c values), then the scenario's own values (ScenarioState: its goals)].
  std::vector<double> GetState() const override {
    std::vector<double> s = {static_cast<double>(steps_)};
    for (int i = 0; i < world_.num_entities(); ++i) {
      const Entity& e = world_.entity(i);
      s.insert(s.end(), {e.pos[0], e.pos[1], e.vel[0], e.vel[1]});
    }
    for (int i = 0; i < world_.num_agents(); ++i) s.insert(s.end(), world_.c(i), world_.c(i) + world_.dim_c());
    for (double v : ScenarioState()) s.push_back(v);
    return s;
  }
  // Positions, velocities and utterances of a world far past anything an episode reaches, yet whose squares and
  // sums stay finite (so rewards do).
  static constexpr double kMaxStateValue = 1e12;
  // Every value is checked before anything changes: a wrong length, a value past kMaxStateValue (NaN and inf
  // included), a step count outside [0, max_cycles] or a scenario value out of its range throws
  // std::invalid_argument.
  void SetState(const std::vector<double>& s) override {
    const size_t world_values =
        1 + 4 * static_cast<size_t>(world_.num_entities()) + static_cast<size_t>(world_.num_agents()) * world_.dim_c();
    const size_t n = world_values + ScenarioStateSize();
    if (s.size() != n) {
      throw std::invalid_argument("MPE state: expected " + std::to_string(n) + " values, got " +
                                  std::to_string(s.size()));
    }
    for (double v : s) {
      if (!(std::fabs(v) <= kMaxStateValue)) {
        throw std::invalid_argument("MPE state: values must be numbers within +-1e12, got " + std::to_string(v));
      }
    }
    if (!(s[0] >= 0 && s[0] <= max_cycles_ && s[0] == std::floor(s[0]))) {
      throw std::invalid_argument("MPE state: the step count must be an integer in [0, max_cycles], got " +
                                  std::to_string(s[0]));
    }
    const std::vector<double> scenario(s.begin() + static_cast<std::ptrdiff_t>(world_values), s.end());
    SetScenarioState(scenario);  // checks its values first, and only then sets them
    steps_ = static_cast<int>(s[0]);
    size_t at = 1;
    for (int i = 0; i < world_.num_entities(); ++i) {
      Entity& e = world_.entity(i);
      e.pos[0] = s[at++];
      e.pos[1] = s[at++];
      e.vel[0] = s[at++];
      e.vel[1] = s[at++];
    }
    for (int i = 0; i < world_.num_agents(); ++i) {
      for (int k = 0; k < world_.dim_c(); ++k) world_.c(i)[k] = s[at++];
    }
  }
  // Snapshots: GetState's values, then the numpy generator the next episode draws from (gen_ is the pool's).
  std::vector<double> SaveState() const override {
    std::vector<double> s = GetState();
    for (double v : rng_.StateWords()) s.push_back(v);
    return s;
  }
  void LoadState(const std::vector<double>& s) override {
    if (s.size() < NumpyGenerator::kStateWords) throw std::invalid_argument("not an MPE snapshot: too short");
    const size_t n = s.size() - NumpyGenerator::kStateWords;
    NumpyGenerator rng;
    rng.SetStateWords(s, n);
    SetState(std::vector<double>(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(n)));
    rng_ = rng;
  }

 protected:
  // `local_ratio` < 0: the scenario has none (each agent's own reward).
  MpeEnv(const Config& c, int env_id, uint64_t seed, double local_ratio)
      : Env(c, env_id, seed),
        max_cycles_(c.Get<int>("max_cycles")),
        continuous_(c.Get<bool>("continuous_actions")),
        local_ratio_(local_ratio),
        rng_(seed) {}

  // After the scenario built world_ (its constructor): its agents as the spec has them (MpeSpec's).
  void Init(std::vector<AgentSpec> agents) {
    agents_ = std::move(agents);
    size_t obs_dim = 0;
    for (const AgentSpec& a : agents_) obs_dim = std::max(obs_dim, static_cast<size_t>(a.obs_size));
    obs_.assign(obs_dim, 0.0);
    dist_.assign(static_cast<size_t>(world_.num_entities()), 0.0);
    seen_.reserve(static_cast<size_t>(world_.num_entities()));
  }

  // Scenario.reset_world: the draws from rng_, in mpe2's order. Velocities and utterances start at zero.
  virtual void ResetWorld() = 0;
  // Scenario.reward for agent i, and Scenario.global_reward (used with local_ratio).
  virtual double Reward(int i) const = 0;
  virtual double GlobalReward() const { return 0.0; }
  // Scenario.observation for agent i, in float64, into obs (its agent's obs_size values).
  virtual void Observation(int i, double* obs) const = 0;
  // Before the agents' observations of a reset or step: what they share (computed once, not once per agent).
  virtual void PrepareObservations() {}
  // Scenario.is_terminal: the episode ends early (terminated).
  virtual bool IsTerminal() const { return false; }
  // What reset_world chose besides positions (goal indices), as values for GetState/SetState.
  virtual std::vector<double> ScenarioState() const { return {}; }
  virtual size_t ScenarioStateSize() const { return 0; }
  virtual void SetScenarioState(const std::vector<double>& s) { (void)s; }

  // A scenario state value that is an index in [0, n).
  static int IndexValue(double v, int n, const char* what) {
    if (!(v >= 0 && v < n && v == std::floor(v))) {
      throw std::invalid_argument(std::string("MPE state: ") + what + " must be an integer in [0, " +
                                  std::to_string(n) + "), got " + std::to_string(v));
    }
    return static_cast<int>(v);
  }

  // The entities agent i observes of `order` (entity indices, in mpe2's list order): all of them (nearest false), or
  // the `slots` nearest, closest first with ties in list order (partial_observability.nearest_entities' argsort,
  // stable on lists this short).
  void Nearest(int i, std::vector<int>& order, bool nearest, int slots) const {
    if (!nearest) return;
    const Entity& agent = world_.agent(i);
    for (int j : order) dist_[static_cast<size_t>(j)] = World::Dist(world_.entity(j), agent);
    // insertion sort: stable, and without allocating
    for (size_t a = 1; a < order.size(); ++a) {
      const int v = order[a];
      size_t b = a;
      for (; b > 0 && dist_[static_cast<size_t>(v)] < dist_[static_cast<size_t>(order[b - 1])]; --b) {
        order[b] = order[b - 1];
      }
      order[b] = v;
    }
    if (static_cast<int>(order.size()) > slots) order.resize(static_cast<size_t>(slots));
  }
  // Writes the positions of `seen` (entity indices) relative to agent i at obs[at], then zeros up to `slots` entities
  // (padded_relative_positions); returns the next index.
  int RelativePositions(int i, const std::vector<int>& seen, int slots, double* obs, int at) const {
    const Entity& agent = world_.agent(i);
    for (int s = 0; s < slots; ++s) {
      const bool filled = s < static_cast<int>(seen.size());
      for (int k = 0; k < 2; ++k) {
        obs[at++] = filled ? world_.entity(seen[static_cast<size_t>(s)]).pos[k] - agent.pos[k] : 0.0;
      }
    }
    return at;
  }
  // Agent i's velocity then position (mpe2's self_vel, self_pos) at obs[0..3]; returns the next index.
  int ObserveSelf(int i, double* obs) const {
    const Entity& agent = world_.agent(i);
    obs[0] = agent.vel[0];
    obs[1] = agent.vel[1];
    obs[2] = agent.pos[0];
    obs[3] = agent.pos[1];
    return 4;
  }
  // The landmarks agent i observes (`which`), their positions relative to it written at obs[at] with zeros in the
  // slots past them; returns the next index. seen_ holds them after (entity indices).
  int ObserveLandmarks(int i, const Neighbors& which, double* obs, int at) const {
    seen_.clear();
    for (int l = 0; l < world_.num_landmarks(); ++l) seen_.push_back(world_.num_agents() + l);
    Nearest(i, seen_, which.nearest, which.slots);
    return RelativePositions(i, seen_, which.slots, obs, at);
  }
  // The same for the agents other than i; seen_ holds them after (agent indices, mpe2's order or nearest first).
  int ObserveOtherAgents(int i, const Neighbors& which, double* obs, int at) const {
    seen_.clear();
    for (int j = 0; j < world_.num_agents(); ++j) {
      if (j != i) seen_.push_back(j);
    }
    Nearest(i, seen_, which.nearest, which.slots);
    return RelativePositions(i, seen_, which.slots, obs, at);
  }
  // mpe2's is_collision: closer than the sum of their sizes.
  static bool Colliding(const Entity& a, const Entity& b) { return World::Dist(a, b) < a.size + b.size; }

  // Every agent and landmark placed uniformly in [-1, 1]^2 (agents first, then landmarks), at rest, silent.
  void PlaceUniformly() {
    for (int i = 0; i < world_.num_entities(); ++i) Place(world_.entity(i), 1.0);
    for (int i = 0; i < world_.num_agents(); ++i) std::fill(world_.c(i), world_.c(i) + world_.dim_c(), 0.0);
  }
  // An entity at rest at uniform(-extent, extent, 2).
  void Place(Entity& e, double extent) {
    e.pos[0] = rng_.Uniform(-extent, extent);
    e.pos[1] = rng_.Uniform(-extent, extent);
    e.vel[0] = e.vel[1] = 0.0;
  }

  void Reseeded(uint64_t seed) override { rng_.Seed(seed); }
  // An env rebuilt by set_config goes on drawing episodes from the numpy generator where the env it replaces was.
  void GeneratorAdopted(const Env& from) override {
    if (const auto* prev = dynamic_cast<const MpeEnv*>(&from)) rng_ = prev->rng_;
  }

  World world_;
  mutable std::vector<int> seen_;  // the entities the last ObserveLandmarks / ObserveOtherAgents wrote, in order
  int steps_ = 0;
  int max_cycles_;
  bool continuous_;
  double local_ratio_;
  NumpyGenerator rng_;

 private:
  // A discrete action at or past its agent's own n (the engine checks only the largest agent's) is refused before
  // anything changes, naming the agent: mpe2 asserts each agent's action is in its own space.
  void CheckDiscreteActions(const ActionView& action) const {
    for (int i = 0; i < world_.num_agents(); ++i) {
      const int a = action.Discrete(i);
      const int n = agents_[static_cast<size_t>(i)].action.DiscreteN();
      if (a >= n) {
        throw std::invalid_argument("MPE agent '" + agents_[static_cast<size_t>(i)].name + "' (player row " +
                                    std::to_string(i) + ") takes Discrete(" + std::to_string(n) + ") actions, in [0, " +
                                    std::to_string(n) + "), got " + std::to_string(a));
      }
    }
  }
  // SimpleEnv._set_action for agent i (after make_env's wrappers: a continuous action is clipped to [0, 1] as
  // ClipOutOfBoundsWrapper does; a discrete one is in the agent's range, CheckDiscreteActions saw to that).
  void SetAction(int i, const ActionView& action) {
    Entity& e = world_.agent(i);
    double* u = world_.u(i);
    double* c = world_.action_c(i);
    const int dim_c = world_.dim_c();
    u[0] = u[1] = 0.0;
    std::fill(c, c + dim_c, 0.0);
    if (continuous_) {
      const float* a = action.Get<float>(0, i);
      int at = 0;
      if (e.movable) {
        // float32 differences (the action is a float32 array), added to float64 zeros
        u[0] += static_cast<double>(Clip(a[2]) - Clip(a[1]));
        u[1] += static_cast<double>(Clip(a[4]) - Clip(a[3]));
        at = 5;
      }
      if (!world_.silent(i)) {
        for (int k = 0; k < dim_c; ++k) c[k] = static_cast<double>(Clip(a[at + k]));
      }
    } else {
      int a = action.Discrete(i);
      if (e.movable) {
        const int move = a % 5;
        a /= 5;
        if (move == 1) u[0] = -1.0;
        if (move == 2) u[0] = +1.0;
        if (move == 3) u[1] = -1.0;
        if (move == 4) u[1] = +1.0;
      }
      if (!world_.silent(i)) c[a] = 1.0;
    }
    if (e.movable) {
      const double sensitivity = e.accel >= 0.0 ? e.accel : 5.0;
      u[0] *= sensitivity;
      u[1] *= sensitivity;
    }
  }
  // np.clip to the Box's [0, 1] (NaN never arrives: the pool refuses it).
  static float Clip(float v) { return std::min(std::max(v, 0.0f), 1.0f); }

  // Each agent's observation, then zeros up to the largest agent's size; and its size.
  void WriteObs(Output& out) {
    PrepareObservations();
    for (int i = 0; i < world_.num_agents(); ++i) {
      const int size = agents_[static_cast<size_t>(i)].obs_size;
      Observation(i, obs_.data());
      float* o = out.Obs<float>(0, i);
      for (int k = 0; k < size; ++k) o[k] = static_cast<float>(obs_[static_cast<size_t>(k)]);
      std::fill(o + size, o + obs_.size(), 0.0f);
      *out.Info<int32_t>(0, i) = size;
    }
  }

  std::vector<AgentSpec> agents_;
  std::vector<double> obs_;
  mutable std::vector<double> dist_;  // scratch of Nearest
};

}  // namespace pp::mpe
