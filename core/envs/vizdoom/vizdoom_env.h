// ViZDoom scenarios through ViZDoom's C++ API (DoomGame, compiled from the vizdoom sdist), with EnvPool's config
// keys, defaults, observation layout, info keys, action spaces and reward shaping. Each env owns one engine
// process (the vizdoom wheel's binary), which dies with the process that started it (see family.cmake).
//
// Observation: uint8 (stack_num * channels, img_height, img_width), the screen buffer's channel planes (1 for
// GRAY8, 3 for CRCGCB/CBCGCR) of each frame in turn, oldest frame first; each plane resized from the scenario's
// screen size with area (or bilinear) interpolation, as cv2.resize does it. Screens narrower than 320 pixels are
// rendered at 320 x 240 and first resized back to the scenario's size (EnvPool: recent engines need width >= 320).
// info: 16 game variables as float64 (AMMO2..AMMO7, ARMOR, DAMAGECOUNT, DEATHCOUNT, FRAGCOUNT, HEALTH, HITCOUNT,
// KILLCOUNT, SELECTED_WEAPON, SELECTED_WEAPON_AMMO, USER2; 0 when the scenario does not have one), with DEATHCOUNT,
// HITCOUNT and DAMAGECOUNT counted from the episode's start.
// Action: float64 (num_buttons,) button values (Box), or with use_combined_action Discrete(EnvPool's combined
// action set, see ActionSetBuilder).
// Reward: EnvPool's shaping only (the scenario's own reward is not used): the sum over game variables of
// (change * pos) for an increase, (change * -neg) for a decrease, per reward_config, plus the weapon reward.
//
// Semantics (EnvPool's unless noted):
//  * Step: the action for frame_skip tics; terminated when the episode finished (or, with episodic_life, the
//    player died). The engine's episode timeout is (max_episode_steps + 1) * frame_skip tics, so episodes end by
//    truncation at max_episode_steps instead of by the scenario's own timeout.
//  * On the step that finishes an episode the engine has no screen: the observation repeats the last frame. The
//    game variables (and so the reward) are read from the engine, where EnvPool keeps the previous step's and
//    gives reward 0 (it loses e.g. the kill that ends Basic).
//  * Reset: a new episode, except after an episodic_life death when the episode goes on (one no-op step), and at
//    the very first reset (the engine's start already began an episode).
//  * Multi-player: num_bots hosts the game (a free UDP port per env) and adds the bots at every episode start.
//    Several agents per env (max_num_players = N > 1): N engines of one network game, player 0 hosting, the others
//    joining; observations, rewards, actions and info have one row per player. The engines advance in lockstep one
//    tic at a time (every engine makes the tic on its own thread, then all wait: a step of frame_skip tics made at
//    once hangs the netcode, see docs/vizdoom.md "Multi-player"); a dead or stalled engine stops the env's others
//    and the step raises. Dead players respawn by themselves (the host adds +sv_forcerespawn 1).
//  * A dead engine makes the step raise; the env's next reset starts a new engine.
//  * Seeding: the engine is seeded once, with the env's seed (its low 32 bits; larger seeds: a draw from the env's
//    generator); later episodes continue the engine's random stream. reset(seed=...) therefore does not reseed
//    the engine.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "ViZDoom.h"
#include "ViZDoomController.h"
#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/common/frame_resize.h"
#include "core/envs/vizdoom/lockstep.h"
#include "core/envs/vizdoom/vizdoom_config.h"

namespace pp::vizdoom {

// EnvPool's info keys: these game variables, in this (alphabetical) order.
inline const std::vector<vzd::GameVariable>& InfoVariables() {
  static const std::vector<vzd::GameVariable> vars = {
      vzd::AMMO2,  vzd::AMMO3,    vzd::AMMO4,       vzd::AMMO5,           vzd::AMMO6,
      vzd::AMMO7,  vzd::ARMOR,    vzd::DAMAGECOUNT, vzd::DEATHCOUNT,      vzd::FRAGCOUNT,
      vzd::HEALTH, vzd::HITCOUNT, vzd::KILLCOUNT,   vzd::SELECTED_WEAPON, vzd::SELECTED_WEAPON_AMMO,
      vzd::USER2};
  return vars;
}

// A path config key that must name an existing file ("" allowed where `optional`).
inline std::string FilePath(const Config& c, const std::string& key, bool optional) {
  const std::string path = c.Get<std::string>(key);
  if (path.rfind("{pkgdir:", 0) == 0) {
    const std::string pkg = path.substr(8, path.find('}') - 8);
    throw std::invalid_argument("config key '" + key + "' defaults to a file of the Python package '" + pkg +
                                "', which is not installed: pip install " +
                                (pkg == "envpool_assets" ? std::string("envpool-assets") : pkg + "==1.3.2") +
                                " (or pass " + key + "=<path>)");
  }
  if (path.empty() && optional) return path;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::invalid_argument("config key '" + key + "': file '" + path + "' does not exist");
  }
  return path;
}

// What the spec needs from a scenario .cfg (read without starting the engine).
struct ScenarioInfo {
  int channels = 0;
  int height = 0, width = 0;
  std::vector<vzd::Button> buttons;
};

inline ScenarioInfo ReadScenario(const Config& c) {
  const std::string cfg = FilePath(c, "cfg_path", true);
  vzd::DoomGame game;
  if (!cfg.empty() && !game.loadConfig(cfg)) {
    throw std::invalid_argument("config key 'cfg_path': ViZDoom could not read '" + cfg + "'");
  }
  const vzd::ScreenFormat f = game.getScreenFormat();
  if (f != vzd::CRCGCB && f != vzd::CBCGCR && f != vzd::GRAY8) {
    throw std::invalid_argument("the scenario '" + cfg + "' has screen_format " + std::to_string(static_cast<int>(f)) +
                                "; this env supports the planar formats CRCGCB, CBCGCR and GRAY8");
  }
  ScenarioInfo info{game.getScreenChannels(), game.getScreenHeight(), game.getScreenWidth(),
                    game.getAvailableButtons()};
  return info;
}

// The combined action set of this config (validates delta_button_config).
inline std::vector<std::vector<double>> CombinedActions(const Config& c, const std::vector<vzd::Button>& buttons) {
  std::map<int, DeltaSteps> deltas;
  for (auto& [name, v] : ParseTable("delta_button_config", c.Get<std::string>("delta_button_config"), 3)) {
    const int b = ButtonByName("delta_button_config", name);
    if (!vzd::isDeltaButton(static_cast<vzd::Button>(b))) {
      throw std::invalid_argument("config key 'delta_button_config': '" + name + "' is not a delta button");
    }
    if (v[0] < 0 || v[0] > 1000 || v[0] != static_cast<int>(v[0])) {
      throw std::invalid_argument("config key 'delta_button_config': the number of values of '" + name +
                                  "' must be an int in [0, 1000]");
    }
    deltas[b] = {static_cast<int>(v[0]), static_cast<float>(v[1]), static_cast<float>(v[2])};
  }
  auto actions = ActionSetBuilder(buttons, c.Get<bool>("force_speed"), std::move(deltas)).Build();
  if (actions.size() > 1000000) {
    throw std::invalid_argument("the combined action set has " + std::to_string(actions.size()) +
                                " actions: use fewer buttons, fewer delta_button_config steps, or "
                                "use_combined_action=False");
  }
  return actions;
}

class VizdoomEnv : public Env {
 public:
  static constexpr const char* kName = "Vizdoom";
  // a step sends the action to the engine process and waits for its frame: the engine's automatic thread count
  // gives such a class a worker per core
  static constexpr bool kStepWaitsOnAnotherProcess = true;

  static std::vector<ConfigKey> ConfigKeys() {
    return {
        {"max_episode_steps", int64_t{525}, "truncate after this many agent steps", {}},
        {"img_height", int64_t{84}, "observation height", {}},
        {"img_width", int64_t{84}, "observation width", {}},
        {"stack_num", int64_t{4}, "frames stacked in an observation", {}},
        {"frame_skip", int64_t{4}, "engine tics per agent step (the action is held)", {}},
        {"lmp_save_dir", std::string(""), "record each episode to <dir>/env_<id>_<episode>.lmp ('' = off)", {}},
        {"episodic_life", false, "the player's death ends the episode", {}},
        {"force_speed", false, "combined action set: SPEED always pressed", {}},
        {"use_combined_action",
         false,
         "Discrete action over EnvPool's combined action set (else a Box of buttons)",
         {}},
        {"use_inter_area_resize", true, "resize with area interpolation (False: bilinear)", {}},
        {"weapon_duration", int64_t{5}, "steps a weapon must stay selected (with ammo) to earn its weapon reward", {}},
        {"reward_config",
         std::string("FRAGCOUNT=1,-1.5;KILLCOUNT=1,0;DEATHCOUNT=-0.75,0.75;HITCOUNT=0.01,-0.01;"
                     "DAMAGECOUNT=0.003,-0.003;HEALTH=0.005,-0.003;ARMOR=0.005,-0.001;"
                     "WEAPON0=0.02,-0.01;AMMO0=0.0002,-0.0001;WEAPON1=0.02,-0.01;AMMO1=0.0002,-0.0001;"
                     "WEAPON2=0.02,-0.01;AMMO2=0.0002,-0.0001;WEAPON3=0.1,-0.05;AMMO3=0.001,-0.0005;"
                     "WEAPON4=0.1,-0.05;AMMO4=0.001,-0.0005;WEAPON5=0.1,-0.05;AMMO5=0.001,-0.0005;"
                     "WEAPON6=0.2,-0.1;AMMO6=0.002,-0.001;WEAPON7=0.2,-0.1;AMMO7=0.002,-0.001"),
         "game variable -> (pos, neg): reward += change * pos on an increase, change * -neg on a decrease "
         "(a dict, or text 'NAME=pos,neg;...')",
         {}},
        {"selected_weapon_reward_config",
         std::string("0=0.0002;1=0.0002;2=0.0002;3=0.001;4=0.001;5=0.001;6=0.002;7=0.002"),
         "weapon slot (0-7) -> reward per step while it is held (a dict, or text 'slot=reward;...')",
         {}},
        {"delta_button_config",
         std::string(""),
         "combined action set: delta button -> (num, min, max) values (a dict, or text 'NAME=num,min,max;...')",
         {}},
        {"cfg_path", std::string(""), "scenario .cfg", {}},
        {"wad_path", std::string(""), "scenario .wad ('' = the one the .cfg names)", {}},
        {"vzd_path",
         std::string("{pkgdir:vizdoom}/vizdoom"),
         "ViZDoom engine binary (default: the vizdoom wheel's)",
         {}},
        {"iwad_path",
         std::string("{pkgdir:vizdoom}/freedoom2.wad"),
         "base game WAD (default: the vizdoom wheel's freedoom2)",
         {}},
        {"game_args", std::string(""), "extra engine arguments (e.g. '-host 1 -deathmatch')", {}},
        {"map_id", std::string("map01"), "map to play", {}},
        {"num_bots",
         int64_t{0},
         "ZDoom bots in each episode (a hosted game; give the rules in game_args, e.g. '-deathmatch "
         "+sv_forcerespawn 1')",
         {}},
    };
  }

  static void DefineSpec(const Config& c, SpecBuilder& b) {
    CheckKeys(c);
    const ScenarioInfo s = ReadScenario(c);
    const int stack = c.Get<int>("stack_num"), h = c.Get<int>("img_height"), w = c.Get<int>("img_width");
    const int players = c.Get<int>("max_num_players");
    b.MaxPlayers(players);
    b.Obs("obs", DType::kUInt8, {stack * s.channels, h, w}, {0.0}, {255.0});
    // each player has its own game variables; one player keeps EnvPool's per-env info
    for (auto v : InfoVariables()) b.Info(kGameVariableNames[v], DType::kFloat64, {}, players > 1);
    if (c.Get<bool>("use_combined_action")) {
      b.DiscreteAction(static_cast<int>(CombinedActions(c, s.buttons).size()));
    } else {
      b.Action("action", DType::kFloat64, {static_cast<int>(s.buttons.size())});
    }
    b.Reward(DType::kFloat32);
    b.RenderSize(s.height, s.width);
  }

  VizdoomEnv(const Config& c, int env_id, uint64_t seed);
  ~VizdoomEnv() override;

  int NumPlayers() const override { return static_cast<int>(engines_.size()); }
  void Reset(Output& out) override;
  void Step(const ActionView& action, Output& out) override;
  void Render(uint8_t* rgb) override;

 private:
  // Every value check of the family's keys, done once at make (DefineSpec) before any engine starts.
  static void CheckKeys(const Config& c) {
    IntInRange(c, "stack_num", 1, 256);
    IntInRange(c, "frame_skip", 1, 1000);
    IntInRange(c, "img_height", 1, 1024);
    IntInRange(c, "img_width", 1, 1024);
    IntInRange(c, "weapon_duration", 0, 1 << 30);
    IntInRange(c, "max_episode_steps", 1, (1 << 30) / 1000);
    IntInRange(c, "num_bots", 0, 15);
    IntInRange(c, "max_num_players", 1, 8);
    if (c.Get<int>("max_num_players") > 1) {
      if (c.Get<bool>("episodic_life")) {
        throw std::invalid_argument(
            "config key 'episodic_life' must be False with max_num_players > 1 (a player's death ends no episode "
            "of a several-agent game: dead players respawn)");
      }
      if (!c.Get<std::string>("lmp_save_dir").empty()) {
        throw std::invalid_argument(
            "config key 'lmp_save_dir' is not supported with max_num_players > 1 (ViZDoom records no network "
            "game)");
      }
    }
    FilePath(c, "vzd_path", false);
    FilePath(c, "iwad_path", false);
    FilePath(c, "wad_path", true);
    ParseRewardConfig(c);
    ParseWeaponRewards(c);
  }
  static std::map<int, std::pair<double, double>> ParseRewardConfig(const Config& c);
  static std::vector<double> ParseWeaponRewards(const Config& c);

  // DoomGame, plus the instance id of its engine process (a random name ViZDoom gives each engine and passes on
  // its command line), by which the env finds the process it started, once, right after starting it.
  class Game : public vzd::DoomGame {
   public:
    std::string InstanceId() { return doomController != nullptr ? doomController->getInstanceId() : ""; }
  };

  // One engine process (one player): its game, screen stack and reward bookkeeping.
  struct Engine {
    std::unique_ptr<Game> game;
    int pidfd = -1;  // the engine process this env started (pidfd_open): what KillEngines signals
    std::unique_ptr<FrameResizer> to_native, to_obs;
    std::vector<uint8_t> native;  // channels_ planes of native_h_ x native_w_
    std::vector<uint8_t> stack;   // stack_num_ frames of channels_ planes of img_h_ x img_w_
    int newest = 0;
    vzd::GameStatePtr shown;  // the state of the newest screen (render reads it at the scenario's size)
    std::vector<double> action_buf;
    std::vector<double> gvs, last_gvs;
    double hit_base = 0, damage_base = 0, death_base = 0;
    int selected_weapon = -1, selected_weapon_steps = 0;
  };

  void SetUpEngine(Engine& e, const Config& c, int player, uint64_t seed);
  void SetUpScreens(const Config& c);
  unsigned EngineSeed(uint64_t seed);
  void Reseeded(uint64_t seed) override;
  void AddBots();
  void SetAction(Engine& e, const ActionView& action, int player);
  // Reads the engine's state after a reset or step and writes player `player`'s rows of `out`.
  void Observe(Engine& e, Output& out, int player, bool episode_start);
  void ReadGameVariables(Engine& e, const vzd::GameStatePtr& state);
  float ShapedReward(Engine& e, bool episode_start);
  void PushScreen(Engine& e, const uint8_t* planes, bool fill_all);
  void HalveScreen(const uint8_t* src, uint8_t* dst) const;
  void WriteOutputs(Engine& e, Output& out, int player, float reward);

  // Time limits of an engine call (seconds): starting the engines (the host of several players waits for every
  // player to join), and any other call. Beyond them the game counts as stalled.
  static constexpr int kStartLimitS = 60, kCallLimitS = 30;
  // How long destroying the env waits for its engines to quit before it kills them.
  static constexpr int kCloseLimitS = 5;
  // How long a call (or close()) may take to return once its engine was killed: a killed engine's calls return
  // within milliseconds, unless it died holding a lock of its message queue (see Lockstep), and then never.
  static constexpr int kKilledLimitS = 5;
  // After one player's call failed, how long the others may take to answer by themselves before their engines are
  // killed (an engine whose peer is gone answers after waiting about a tic for it).
  static constexpr int kSettleMs = 1000;
  // Every engine makes the call, on the Lockstep's threads (several players: together); a failure, or a call past
  // its limit, stops them all, and a call that still does not return is abandoned (Lockstep): the step raises
  // instead of blocking for good. One player too: an engine killed while it holds its message queue's lock leaves
  // its call blocked on that lock, and without the Lockstep the thread blocked would be the pool's (often the
  // caller's own). The cost: a hand-off to the Lockstep's thread and back per call.
  void TogetherOrStop(const std::function<void(int)>& fn, int limit_s);
  static Lockstep::Limits Limits(int limit_s) {
    return {std::chrono::seconds(limit_s), std::chrono::milliseconds(kSettleMs), std::chrono::seconds(kKilledLimitS)};
  }
  // Throws when a call of this env never returned (Lockstep abandoned): the env's games are out of use for good.
  void CheckUsable() const;
  // close() every engine, bounded: a close() that does not return is abandoned with the games it uses.
  void CloseGames();
  // After the Lockstep abandoned a call: releases the games (never freed) and returns true.
  bool LeakGamesIfAbandoned() noexcept;
  void KillEngines() const noexcept;
  void Abort() noexcept override { KillEngines(); }
  std::vector<double> SaveState() const override {
    throw std::runtime_error(
        "ViZDoom keeps the game in its own engine process, which saves a game only to a file (DoomGame.save/load), "
        "not to memory: snapshots of ViZDoom envs are not implemented");
  }
  void FindEngineProcesses(bool strict);
  void ForgetEngineProcesses() noexcept;
  void ClaimInstance(const std::string& id) const;
  void StartEngines();
  void RestartEngines();
  bool Several() const { return engines_.size() > 1; }

  std::vector<Engine> engines_;         // player 0 first (the host of a several-agent game)
  std::unique_ptr<Lockstep> lockstep_;  // one thread per player, which make every engine call
  int port_ = 0;                        // the hosted game's UDP port (bots or several players)
  int port_lock_ = -1;                  // an flock held on the port's lock file while this env uses the port
  std::string private_dir_;             // this env's own temp folder (0700): the engines' settings file
  int stack_num_, frame_skip_, img_h_, img_w_, max_episode_steps_, weapon_duration_;
  bool episodic_life_, combined_;
  int num_bots_;
  std::string lmp_prefix_;
  std::vector<std::vector<double>> action_set_;
  int num_buttons_ = 0;

  // screens
  int channels_ = 0, screen_h_ = 0, screen_w_ = 0;  // the engine's buffer
  int native_h_ = 0, native_w_ = 0;                 // the scenario's size (render, the resize's source)
  bool halve_ = false;  // the engine's screen is twice the scenario's size (e.g. 320 x 240 for 160 x 120)
  uint8_t identity_[256];
  size_t frame_bytes_ = 0;

  // game variables and reward (the same for every player)
  std::vector<vzd::GameVariable> vars_;  // the engine's available game variables
  std::vector<int> info_slot_;           // InfoVariables()[i] is vars_[info_slot_[i]] (-1: absent)
  std::vector<double> pos_, neg_;
  std::vector<double> weapon_reward_;
  int hit_idx_ = -1, damage_idx_ = -1, death_idx_ = -1;

  // episode bookkeeping
  bool started_ = false;            // the first Reset uses the episode the engine's start began
  bool continue_game_ = false;      // episodic_life death in a game that goes on
  std::optional<unsigned> reseed_;  // the engine seed of a reset(seed=...), applied by the next Reset
  int steps_ = 0;
  int episode_count_ = 0;
};

}  // namespace pp::vizdoom
