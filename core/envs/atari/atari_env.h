// Atari 2600 games through the Arcade Learning Environment (ALE, compiled from the ale-py sdist), with EnvPool's
// preprocessing options and defaults: no-op starts, fire reset, frame skip with max-pooling of the last two frames,
// grayscale, area resize, frame stacking, episodic life, reward clipping.
//
// Observation: uint8 (stack_num, img_height, img_width), or (3 * stack_num, img_height, img_width) with
// gray_scale=False (EnvPool's layout: each frame's R, G, B planes in turn); oldest frame first.
// Action: Discrete(minimal action set), or all 18 with full_action_space.
// info: lives, reward (unclipped), terminated (the real game over, also under episodic_life), ram (the 128 bytes
// of console RAM after the step, as EnvPool and ALE's getRAM give it), and discount (only with
// zero_discount_on_life_loss: 0 on a step that lost a life; the dm front-end multiplies it in).
// render: the full-size RGB screen (ALE's getScreenRGB: 210 x 160 for most ROMs), drawn on the calling thread.
//
// Semantics (EnvPool's unless noted):
//  * Reset: reset the game (unless episodic_life and the previous episode ended by a life loss: then the game
//    goes on), then k no-op frames with k uniform in [1, noop_max] (k - 1 when fire reset applies, then one FIRE
//    frame); fire reset applies when use_fire_reset and the action set contains FIRE. The first frame is the
//    current screen, copied into every stack slot when the game was reset.
//  * Step: the action for frame_skip frames (stops early at game over); the observation is the max of the last
//    two frames. If the game ends before the last frame, the final frame alone (EnvPool and gymnasium keep a stale
//    frame there).
//  * Sticky actions (repeat_action_probability) are applied per frame as ALE does, but drawn from the env's own
//    generator so that reset(seed=...) reseeds them too.
//  * max_episode_steps counts agent steps of the whole game (across life losses under episodic_life).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "ale/ale_interface.hpp"
#include "ale/emucore/MD5.hxx"
#include "core/engine/env.h"
#include "core/engine/registry.h"
#include "core/envs/atari/ale_state_check.h"
#include "core/envs/common/frame_resize.h"

namespace pp::atari {

// What the spec needs to know about a ROM.
struct RomInfo {
  int num_minimal = 0, num_legal = 0;
  int screen_height = 0, screen_width = 0;  // most ROMs 210 x 160; a few (e.g. some PAL games) are taller
  std::vector<int> modes, difficulties;
};

inline std::string RomPath(const Config& c) {
  std::string dir = c.Get<std::string>("rom_dir");
  std::string task = c.Get<std::string>("task");
  if (dir.rfind("{pkgdir:", 0) == 0) {
    throw std::invalid_argument(
        "the Atari ROMs are read from the ale-py package, which is not installed: pip install ale-py==0.12.1 "
        "(or pass rom_dir=<a folder holding " +
        task + ".bin>)");
  }
  return (std::filesystem::path(dir) / (task + ".bin")).string();
}

inline RomInfo ReadRomInfo(const std::string& path, const std::string& task) {
  static std::mutex mu;
  static std::map<std::string, RomInfo> cache;
  std::lock_guard<std::mutex> lk(mu);
  auto it = cache.find(path);
  if (it != cache.end()) return it->second;
  std::ifstream f(path, std::ios::binary);
  if (!f.good()) {
    throw std::invalid_argument("Atari ROM '" + path + "' not found (task '" + task +
                                "'); check the task name and rom_dir");
  }
  std::vector<uint8_t> rom((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string md5 = ale::stella::MD5(rom.data(), static_cast<uint32_t>(rom.size()));
  std::unique_ptr<ale::RomSettings> settings(ale::buildRomRLWrapper(path, md5));
  if (!settings) {
    throw std::invalid_argument("Atari ROM '" + path + "' is not supported by ALE " + std::string(ALE_VERSION) +
                                " (unknown ROM; multi-player-only ROMs are not supported)");
  }
  RomInfo info;
  info.num_minimal = static_cast<int>(settings->getMinimalActionSet().size());
  info.num_legal = static_cast<int>(settings->getAllActions().size());
  for (auto m : settings->getAvailableModes()) info.modes.push_back(static_cast<int>(m));
  for (auto d : settings->getAvailableDifficulties()) info.difficulties.push_back(static_cast<int>(d));
  // The screen size is known only once the emulator has loaded the ROM (once per ROM and process; the checks
  // above guarantee loadROM accepts it).
  ale::ALEInterface ale;
  ale.loadROM(path);
  info.screen_height = static_cast<int>(ale.getScreen().height());
  info.screen_width = static_cast<int>(ale.getScreen().width());
  cache[path] = info;
  return info;
}

class AtariEnv : public Env {
 public:
  static constexpr const char* kName = "Atari";

  static std::vector<ConfigKey> ConfigKeys() {
    return {
        {"max_episode_steps", int64_t{27000}, "truncate after this many agent steps (of the whole game)", {}},
        {"task", std::string("pong"), "ROM name: <rom_dir>/<task>.bin", {}},
        {"rom_dir",
         std::string("{pkgdir:ale_py}/roms"),
         "folder holding the ROMs (default: the installed ale-py package's roms folder)",
         {}},
        {"stack_num", int64_t{4}, "frames stacked in an observation", {}},
        {"frame_skip", int64_t{4}, "emulator frames per agent step (the observation max-pools the last two)", {}},
        {"noop_max", int64_t{30}, "reset plays a uniform number of no-op frames in [1, noop_max] (0: none)", {}},
        {"zero_discount_on_life_loss", false, "info['discount'] (and dm discount) is 0 on a step that lost a life", {}},
        {"episodic_life", false, "a life loss ends the episode (the game goes on at the next reset)", {}},
        {"reward_clip", false, "reward is sign(reward); info['reward'] keeps the raw reward", {}},
        {"use_fire_reset", true, "press FIRE after the no-ops at reset (games whose action set has FIRE)", {}},
        {"img_height", int64_t{84}, "observation height", {}},
        {"img_width", int64_t{84}, "observation width", {}},
        {"mode", int64_t{-1}, "game mode (-1: the ROM's default)", {}},
        {"difficulty", int64_t{-1}, "game difficulty (-1: the ROM's default)", {}},
        {"full_action_space", false, "all 18 actions instead of the game's minimal set", {}},
        {"repeat_action_probability",
         0.0,
         "sticky actions: per frame, keep the previous action with this probability",
         {}},
        {"use_inter_area_resize", true, "resize with area interpolation (False: bilinear)", {}},
        {"gray_scale", true, "grayscale frames (False: RGB, obs shape (3 * stack, H, W))", {}},
    };
  }

  static void DefineSpec(const Config& c, SpecBuilder& b) {
    CheckSizes(c);
    double p = c.Get<double>("repeat_action_probability");
    if (!(p >= 0.0 && p <= 1.0)) {
      throw std::invalid_argument("config key 'repeat_action_probability' must be in [0, 1], got " + std::to_string(p));
    }
    RomInfo rom = ReadRomInfo(RomPath(c), c.Get<std::string>("task"));
    auto check_choice = [](const char* key, int v, const std::vector<int>& allowed) {
      if (v < 0) return;
      if (std::find(allowed.begin(), allowed.end(), v) == allowed.end()) {
        std::string s;
        for (int a : allowed) {
          if (!s.empty()) s += ", ";
          s += std::to_string(a);
        }
        throw std::invalid_argument(std::string("config key '") + key + "' must be -1 or one of [" + s + "], got " +
                                    std::to_string(v));
      }
    };
    check_choice("mode", c.Get<int>("mode"), rom.modes);
    check_choice("difficulty", c.Get<int>("difficulty"), rom.difficulties);
    const int stack = c.Get<int>("stack_num"), h = c.Get<int>("img_height"), w = c.Get<int>("img_width");
    b.Obs("obs", DType::kUInt8, {stack * (c.Get<bool>("gray_scale") ? 1 : 3), h, w}, {0.0}, {255.0});
    b.Info("lives", DType::kInt32);
    b.Info("reward", DType::kFloat32);
    b.Info("terminated", DType::kInt32);
    b.Info("ram", DType::kUInt8, {kRamBytes});
    if (c.Get<bool>("zero_discount_on_life_loss")) b.Info("discount", DType::kFloat32);
    b.DiscreteAction(c.Get<bool>("full_action_space") ? rom.num_legal : rom.num_minimal);
    b.Reward(DType::kFloat32);
    b.RenderSize(rom.screen_height, rom.screen_width);
  }

  // ALE's getScreenRGB: each palette index through ALE's own RGB table (the one the colour frames use).
  void Render(uint8_t* rgb) override {
    const uint8_t* screen = ale_->getScreen().getArray();
    const size_t n = static_cast<size_t>(raw_h_) * raw_w_;
    for (size_t i = 0; i < n; ++i) {
      for (int ch = 0; ch < 3; ++ch) rgb[3 * i + ch] = lut_rgb_[ch][screen[i]];
    }
  }

  AtariEnv(const Config& c, int env_id, uint64_t seed)
      : Env(c, env_id, seed),
        max_episode_steps_(c.Get<int>("max_episode_steps")),
        stack_num_(c.Get<int>("stack_num")),
        frame_skip_(c.Get<int>("frame_skip")),
        noop_max_(c.Get<int>("noop_max")),
        img_h_(c.Get<int>("img_height")),
        img_w_(c.Get<int>("img_width")),
        gray_(c.Get<bool>("gray_scale")),
        episodic_life_(c.Get<bool>("episodic_life")),
        reward_clip_(c.Get<bool>("reward_clip")),
        zero_discount_(c.Get<bool>("zero_discount_on_life_loss")),
        sticky_p_(c.Get<double>("repeat_action_probability")) {
    const std::string path = RomPath(c);
    ReadRomInfo(path, c.Get<std::string>("task"));  // validates the ROM (ALE's loadROM would exit the process)
    rom_name_ = c.Get<std::string>("task");
    ale_ = std::make_unique<ale::ALEInterface>();
    ale_->setInt("random_seed", static_cast<int>(seed & 0x7fffffff));  // ALE's own RNG: Adventure's mode select
    ale_->setFloat("repeat_action_probability", 0.0f);                 // sticky actions are applied here
    ale_->setInt("frame_skip", 1);
    ale_->setInt("max_num_frames_per_episode", 0);
    ale_->loadROM(path);
    if (c.Get<int>("mode") >= 0) ale_->setMode(static_cast<ale::game_mode_t>(c.Get<int>("mode")));
    if (c.Get<int>("difficulty") >= 0) {
      ale_->setDifficulty(static_cast<ale::difficulty_t>(c.Get<int>("difficulty")));
    }
    action_set_ = c.Get<bool>("full_action_space") ? ale_->getLegalActionSet() : ale_->getMinimalActionSet();
    fire_reset_ = c.Get<bool>("use_fire_reset") &&
                  std::find(action_set_.begin(), action_set_.end(), ale::PLAYER_A_FIRE) != action_set_.end();

    const ale::ALEScreen& screen = ale_->getScreen();
    raw_h_ = static_cast<int>(screen.height());
    raw_w_ = static_cast<int>(screen.width());
    prev_.assign(static_cast<size_t>(raw_h_) * raw_w_, 0);
    // Palette lookup tables, built by ALE's own conversion for every index: screens hold palette indices, and
    // some games (e.g. Air Raid) write odd ones, which ALE maps in its own way; the tables reproduce that.
    uint8_t idx[256], gray[256], rgb[256 * 3];
    for (int i = 0; i < 256; ++i) idx[i] = static_cast<uint8_t>(i);
    auto& palette = ale_->theOSystem->colourPalette();
    palette.applyPaletteGrayscale(gray, idx, 256);
    palette.applyPaletteRGB(rgb, idx, 256);
    for (int i = 0; i < 256; ++i) {
      lut_gray_[i] = gray[i];
      for (int ch = 0; ch < 3; ++ch) lut_rgb_[ch][i] = rgb[i * 3 + ch];
    }
    resizer_ = std::make_unique<FrameResizer>(raw_h_, raw_w_, img_h_, img_w_, c.Get<bool>("use_inter_area_resize"));
    frame_bytes_ = static_cast<size_t>(img_h_) * img_w_ * (gray_ ? 1 : 3);
    stack_.assign(frame_bytes_ * stack_num_, 0);
  }

  void Reset(Output& out) override {
    bool new_game = !(episodic_life_ && continue_game_);
    continue_game_ = false;
    if (new_game) {
      ale_->reset_game();
      sticky_action_ = ale::PLAYER_A_NOOP;
      game_steps_ = 0;
    }
    int noops = 0;
    if (noop_max_ > 0) noops = std::uniform_int_distribution<int>(0, noop_max_ - 1)(gen_) + 1;
    if (fire_reset_) noops = std::max(0, noops - 1);
    for (int i = 0; i < noops; ++i) {
      Frame(ale::PLAYER_A_NOOP);
      if (ale_->game_over()) {
        ale_->reset_game();
        sticky_action_ = ale::PLAYER_A_NOOP;
        new_game = true;
      }
    }
    if (fire_reset_) Frame(ale::PLAYER_A_FIRE);
    PushFrame(nullptr, ale_->getScreen().getArray(), new_game);
    lives_ = ale_->lives();
    *out.Info<int32_t>(kLives) = lives_;
    *out.Info<float>(kReward) = 0.f;
    *out.Info<int32_t>(kTerminated) = ale_->game_over() ? 1 : 0;
    WriteRam(out);
    if (zero_discount_) *out.Info<float>(kDiscount) = 1.f;
    WriteObs(out);
  }

  void Step(const ActionView& action, Output& out) override {
    const ale::Action a = action_set_[action.Discrete()];
    ale::reward_t reward = 0;
    bool over = false;
    int last = 0;  // index of the last frame emulated
    for (int i = 0; i < frame_skip_; ++i) {
      last = i;
      reward += Frame(a);
      over = ale_->game_over();
      if (over) break;
      if (i == frame_skip_ - 2) std::memcpy(prev_.data(), ale_->getScreen().getArray(), prev_.size());
    }
    const bool pool = frame_skip_ >= 2 && last == frame_skip_ - 1;
    PushFrame(pool ? prev_.data() : nullptr, ale_->getScreen().getArray(), false);
    ++game_steps_;

    const int lives = ale_->lives();
    const bool life_lost = lives < lives_;
    bool terminated = over;
    if (episodic_life_ && !over && life_lost && lives > 0) {
      terminated = true;
      continue_game_ = true;
    }
    const bool truncated = !terminated && game_steps_ >= max_episode_steps_;
    float r = static_cast<float>(reward);
    float shaped = r;
    if (reward_clip_) shaped = static_cast<float>((r > 0) - (r < 0));
    lives_ = lives;
    out.SetReward(shaped);
    out.SetTerminated(terminated);
    if (truncated) out.SetTruncated(true);
    *out.Info<int32_t>(kLives) = lives;
    *out.Info<float>(kReward) = r;
    *out.Info<int32_t>(kTerminated) = over ? 1 : 0;
    WriteRam(out);
    if (zero_discount_) *out.Info<float>(kDiscount) = life_lost ? 0.f : 1.f;
    WriteObs(out);
  }

  // Snapshots: the emulator (ALE's cloneState with its RNG, serialized, one byte per value) and the preprocessing
  // state around it: the frame stack and its newest slot, the sticky action, lives, the game's step count and the
  // episodic-life flag. The max-pool buffer (prev_) is not kept: a step writes it before it reads it.
  // Layout: [ale bytes count, ale bytes..., newest, sticky action, lives, game steps, continue game, stack...].
  std::vector<double> SaveState() const override {
    const std::string ale = ale_->cloneState(true).serialize();
    std::vector<double> s;
    s.reserve(6 + ale.size() + stack_.size());
    s.push_back(static_cast<double>(ale.size()));
    for (char ch : ale) s.push_back(static_cast<double>(static_cast<unsigned char>(ch)));
    s.insert(s.end(), {static_cast<double>(newest_), static_cast<double>(sticky_action_), static_cast<double>(lives_),
                       static_cast<double>(game_steps_), continue_game_ ? 1.0 : 0.0});
    s.insert(s.end(), stack_.begin(), stack_.end());
    return s;
  }
  void LoadState(const std::vector<double>& s) override {
    const auto bad = [] { return std::invalid_argument("not an Atari snapshot of this task (wrong size or values)"); };
    if (s.empty() || s[0] < 0 || s[0] != std::floor(s[0]) || s.size() != 1 + s[0] + 5 + stack_.size()) throw bad();
    const size_t n = static_cast<size_t>(s[0]);
    std::string ale(n, '\0');
    for (size_t i = 0; i < n; ++i) {
      const double v = s[1 + i];
      if (v < 0 || v > 255 || v != std::floor(v)) throw bad();
      ale[i] = static_cast<char>(static_cast<unsigned char>(v));
    }
    const double* tail = s.data() + 1 + n;
    const double actions = static_cast<double>(ale::PLAYER_B_NOOP);  // player A's actions come first
    // the frame slot and the sticky action index arrays; lives and the step count are ints (a game's lives are a
    // byte of its RAM; a step count at the limit ends the episode at the next step, which must still count)
    auto is_int_in = [](double v, double lo, double hi) { return v >= lo && v <= hi && v == std::floor(v); };
    if (!is_int_in(tail[0], 0, stack_num_ - 1) || !is_int_in(tail[1], 0, actions - 1) || !is_int_in(tail[2], 0, 255) ||
        !is_int_in(tail[3], 0, std::numeric_limits<int>::max() - 1) || (tail[4] != 0.0 && tail[4] != 1.0)) {
      throw bad();
    }
    for (size_t i = 0; i < stack_.size(); ++i) {
      if (tail[5 + i] < 0 || tail[5 + i] > 255) throw bad();
    }
    // ALE's reader trusts its input: the state is walked by our own checks first (same game, cartridge and layout
    // as this env's own state, every size and index bounded), and any error ALE still raises is named here
    const std::string what = "an Atari snapshot for " + rom_name_;
    CheckAleState(ale, ale_->cloneState(true).serialize(), what);
    try {
      ale::ALEState state(ale);
      ale_->restoreState(state);
    } catch (const std::exception& e) {
      throw std::invalid_argument(what + ": ALE refused its emulator state (" + e.what() + ")");
    } catch (const char* e) {
      throw std::invalid_argument(what + ": ALE refused its emulator state (" + e + ")");
    } catch (...) {
      throw std::invalid_argument(what + ": ALE refused its emulator state");
    }
    newest_ = static_cast<int>(tail[0]);
    sticky_action_ = static_cast<ale::Action>(static_cast<int>(tail[1]));
    lives_ = static_cast<int>(tail[2]);
    game_steps_ = static_cast<int>(tail[3]);
    continue_game_ = tail[4] != 0.0;
    for (size_t i = 0; i < stack_.size(); ++i) stack_[i] = static_cast<uint8_t>(tail[5 + i]);
  }

 private:
  enum { kLives = 0, kReward = 1, kTerminated = 2, kRam = 3, kDiscount = 4 };
  static constexpr int kRamBytes = 128;

  // The int keys that size buffers and loops, each within a range that keeps every buffer size in int.
  static void CheckSizes(const Config& c) {
    IntInRange(c, "stack_num", 1, 256);
    IntInRange(c, "frame_skip", 1, 1000);
    IntInRange(c, "img_height", 1, 1024);
    IntInRange(c, "img_width", 1, 1024);
    IntInRange(c, "noop_max", 0, 1000000);
  }

  void WriteRam(Output& out) {
    const ale::ALERAM& ram = ale_->getRAM();
    std::memcpy(out.Info<uint8_t>(kRam), ram.array(), kRamBytes);
  }

  // One emulator frame, with ALE's sticky-action rule drawn from this env's generator.
  ale::reward_t Frame(ale::Action a) {
    if (sticky_p_ <= 0.0 || std::uniform_real_distribution<double>(0.0, 1.0)(gen_) >= sticky_p_) {
      sticky_action_ = a;
    }
    return ale_->act(sticky_action_);
  }

  // Preprocess a frame (max of palette(a), palette(b); a may be null) into the newest stack slot.
  void PushFrame(const uint8_t* a, const uint8_t* b, bool fill_all) {
    newest_ = (newest_ + 1) % stack_num_;
    uint8_t* dst = stack_.data() + frame_bytes_ * newest_;
    if (gray_) {
      resizer_->Run(a, b, lut_gray_, dst, 1);
    } else {  // planar: the R, G and B planes of the frame in turn
      const size_t plane = frame_bytes_ / 3;
      for (int ch = 0; ch < 3; ++ch) resizer_->Run(a, b, lut_rgb_[ch], dst + plane * ch, 1);
    }
    if (fill_all) {
      for (int i = 0; i < stack_num_; ++i) {
        if (i != newest_) std::memcpy(stack_.data() + frame_bytes_ * i, dst, frame_bytes_);
      }
    }
  }

  // Oldest first: slot newest_+1 ... newest_.
  void WriteObs(Output& out) {
    uint8_t* o = out.Obs<uint8_t>(0);
    int first = (newest_ + 1) % stack_num_;
    size_t n1 = frame_bytes_ * (stack_num_ - first);
    std::memcpy(o, stack_.data() + frame_bytes_ * first, n1);
    if (first > 0) std::memcpy(o + n1, stack_.data(), frame_bytes_ * first);
  }

  int max_episode_steps_, stack_num_, frame_skip_, noop_max_, img_h_, img_w_;
  bool gray_, episodic_life_, reward_clip_, zero_discount_;
  double sticky_p_;
  bool fire_reset_ = false;
  std::unique_ptr<ale::ALEInterface> ale_;
  ale::ActionVect action_set_;
  ale::Action sticky_action_ = ale::PLAYER_A_NOOP;
  int raw_h_ = 0, raw_w_ = 0;
  std::vector<uint8_t> prev_;
  uint8_t lut_gray_[256];
  uint8_t lut_rgb_[3][256];
  std::unique_ptr<FrameResizer> resizer_;
  size_t frame_bytes_ = 0;
  std::vector<uint8_t> stack_;
  int newest_ = 0;
  std::string rom_name_;  // the config's task (the ROM's name), for error messages
  int lives_ = 0;
  int game_steps_ = 0;
  bool continue_game_ = false;
};

}  // namespace pp::atari
