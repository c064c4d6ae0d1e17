#include "core/envs/vizdoom/vizdoom_env.h"

#include <utility>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace pp::vizdoom {

namespace {

// A UDP port that is free now, for a hosted game (the small race with other programs is accepted): a host listens
// on a port, 5029 unless told, and two envs must not share one.
int FreeUdpPort() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) throw std::runtime_error("ViZDoom: cannot open a UDP socket to pick the hosted game's port");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  if (port < 0) throw std::runtime_error("ViZDoom: cannot find a free UDP port for the hosted game");
  return port;
}

}  // namespace

std::map<int, std::pair<double, double>> VizdoomEnv::ParseRewardConfig(const Config& c) {
  std::map<int, std::pair<double, double>> rewards;
  for (auto& [name, v] : ParseTable("reward_config", c.Get<std::string>("reward_config"), 2)) {
    rewards[GameVariableByName("reward_config", name)] = {v[0], v[1]};
  }
  return rewards;
}

std::vector<double> VizdoomEnv::ParseWeaponRewards(const Config& c) {
  std::vector<double> rewards(10, 0.0);
  for (auto& [slot, v] :
       ParseTable("selected_weapon_reward_config", c.Get<std::string>("selected_weapon_reward_config"), 1)) {
    char* end = nullptr;
    const long s = std::strtol(slot.c_str(), &end, 10);
    if (slot.empty() || *end != '\0' || s < 0 || s > 9) {
      throw std::invalid_argument("config key 'selected_weapon_reward_config': weapon slot '" + slot +
                                  "' must be an int in [0, 9]");
    }
    rewards[static_cast<size_t>(s)] = v[0];
  }
  return rewards;
}

VizdoomEnv::VizdoomEnv(const Config& c, int env_id, uint64_t seed)
    : Env(c, env_id, seed),
      stack_num_(c.Get<int>("stack_num")),
      frame_skip_(c.Get<int>("frame_skip")),
      img_h_(c.Get<int>("img_height")),
      img_w_(c.Get<int>("img_width")),
      max_episode_steps_(c.Get<int>("max_episode_steps")),
      weapon_duration_(c.Get<int>("weapon_duration")),
      episodic_life_(c.Get<bool>("episodic_life")),
      combined_(c.Get<bool>("use_combined_action")),
      num_bots_(c.Get<int>("num_bots")) {
  const std::string lmp_dir = c.Get<std::string>("lmp_save_dir");
  if (!lmp_dir.empty()) lmp_prefix_ = lmp_dir + "/env_" + std::to_string(env_id) + "_";
  SetUpGame(c, seed);
}

VizdoomEnv::~VizdoomEnv() {
  try {
    game_->close();  // stops the engine process and waits for it
  } catch (...) {    // a dead engine: nothing left to stop
  }
}

void VizdoomEnv::SetUpGame(const Config& c, uint64_t seed) {
  game_ = std::make_unique<vzd::DoomGame>();
  game_->setViZDoomPath(FilePath(c, "vzd_path", false));
  game_->setDoomGamePath(FilePath(c, "iwad_path", false));
  const std::string cfg = FilePath(c, "cfg_path", true);
  if (!cfg.empty()) game_->loadConfig(cfg);
  native_h_ = game_->getScreenHeight();
  native_w_ = game_->getScreenWidth();
  if (native_w_ < 320) game_->setScreenResolution(vzd::RES_320X240);
  game_->setWindowVisible(false);
  // the engine's own settings file (ViZDoom's default: _vizdoom.ini in the working directory)
  game_->setDoomConfigPath((std::filesystem::temp_directory_path() / "parallel_pool_vizdoom.ini").string());
  // bots need a hosted (network) game; the scenario's rules (e.g. -deathmatch) come from game_args
  if (num_bots_ > 0) game_->addGameArgs("-host 1 -port " + std::to_string(FreeUdpPort()));
  game_->addGameArgs(c.Get<std::string>("game_args"));
  game_->setMode(vzd::PLAYER);
  game_->setEpisodeTimeout(static_cast<unsigned>((max_episode_steps_ + 1) * frame_skip_));
  const std::string wad = FilePath(c, "wad_path", true);
  if (!wad.empty()) game_->setDoomScenarioPath(wad);
  game_->setSeed(EngineSeed(seed));
  game_->setDoomMap(c.Get<std::string>("map_id"));
  for (auto v : InfoVariables()) game_->addAvailableGameVariable(v);

  const std::vector<vzd::Button> buttons = game_->getAvailableButtons();
  if (buttons.empty()) {  // the spec allows it (VizdoomCustom-v1's defaults); an engine without buttons does not
    throw std::invalid_argument("the scenario '" + cfg + "' declares no available_buttons" +
                                (cfg.empty() ? ": pass cfg_path=<your .cfg> (VizdoomCustom-v1 has none)" : ""));
  }
  num_buttons_ = static_cast<int>(buttons.size());
  if (combined_) action_set_ = CombinedActions(c, buttons);
  action_buf_.assign(buttons.size(), 0.0);

  vars_ = game_->getAvailableGameVariables();
  auto slot = [&](vzd::GameVariable v) {
    auto it = std::find(vars_.begin(), vars_.end(), v);
    return it == vars_.end() ? -1 : static_cast<int>(it - vars_.begin());
  };
  for (auto v : InfoVariables()) info_slot_.push_back(slot(v));
  hit_idx_ = slot(vzd::HITCOUNT);
  damage_idx_ = slot(vzd::DAMAGECOUNT);
  death_idx_ = slot(vzd::DEATHCOUNT);
  pos_.assign(vars_.size(), 0.0);
  neg_.assign(vars_.size(), 0.0);
  for (auto& [v, pn] : ParseRewardConfig(c)) {
    const int i = slot(static_cast<vzd::GameVariable>(v));
    if (i >= 0) std::tie(pos_[i], neg_[i]) = pn;
  }
  weapon_reward_ = ParseWeaponRewards(c);

  game_->init();
  AddBots();
  channels_ = game_->getScreenChannels();
  screen_h_ = game_->getScreenHeight();
  screen_w_ = game_->getScreenWidth();
  const bool area = c.Get<bool>("use_inter_area_resize");
  halve_ = area && screen_h_ == 2 * native_h_ && screen_w_ == 2 * native_w_;
  if (!halve_ && (screen_h_ != native_h_ || screen_w_ != native_w_)) {
    to_native_ = std::make_unique<atari::FrameResizer>(screen_h_, screen_w_, native_h_, native_w_, area);
  }
  // cv2.resize to the same size copies
  if (img_h_ != native_h_ || img_w_ != native_w_) {
    to_obs_ = std::make_unique<atari::FrameResizer>(native_h_, native_w_, img_h_, img_w_, area);
  }
  for (int i = 0; i < 256; ++i) identity_[i] = static_cast<uint8_t>(i);
  if (halve_ || to_native_) native_.assign(static_cast<size_t>(channels_) * native_h_ * native_w_, 0);
  frame_bytes_ = static_cast<size_t>(channels_) * img_h_ * img_w_;
  stack_.assign(frame_bytes_ * stack_num_, 0);
}

// EnvPool seeds the engine with seed + env_id; 64-bit seeds beyond that range draw from the env's generator (just
// seeded with `seed`).
unsigned VizdoomEnv::EngineSeed(uint64_t seed) {
  return seed <= 0xffffffffULL ? static_cast<unsigned>(seed) : static_cast<unsigned>(gen_());
}

void VizdoomEnv::Reseeded(uint64_t seed) { reseed_ = EngineSeed(seed); }

void VizdoomEnv::Reset(Output& out) {
  // reset(seed=s): the engine draws each episode's seed from a generator seeded with s, so reseeding it and
  // starting a new episode replays the episodes of an env made with seed s
  const std::optional<unsigned> reseed = std::exchange(reseed_, std::nullopt);
  if (reseed) game_->setSeed(*reseed);
  if (!game_->isRunning()) {  // the engine died (the step that noticed raised): start a new one
    game_->init();
    AddBots();
  } else if (!started_ && !reseed) {
    // init() began the first episode
  } else if (continue_game_ && !reseed) {
    game_->makeAction(std::vector<double>(num_buttons_, 0.0), frame_skip_);  // EnvPool: one no-op step
  } else {
    if (lmp_prefix_.empty()) {
      game_->newEpisode();
    } else {
      game_->newEpisode(lmp_prefix_ + std::to_string(episode_count_) + ".lmp");
    }
    AddBots();
  }
  started_ = true;
  continue_game_ = false;
  steps_ = 0;
  ++episode_count_;
  vzd::GameStatePtr state = game_->getState();
  ReadGameVariables(state);
  const float reward = ShapedReward(true);
  if (state && state->screenBuffer) PushScreen(state->screenBuffer->data(), true);
  WriteOutputs(out, reward);
}

void VizdoomEnv::Step(const ActionView& action, Output& out) {
  if (combined_) {
    game_->setAction(action_set_[action.Discrete()]);
  } else {
    const double* a = action.Get<double>();
    action_buf_.assign(a, a + num_buttons_);
    game_->setAction(action_buf_);
  }
  game_->advanceAction(frame_skip_, true);
  ++steps_;
  const bool finished = game_->isEpisodeFinished();
  const bool dead = episodic_life_ && game_->isPlayerDead();
  vzd::GameStatePtr state = game_->getState();
  ReadGameVariables(state);
  const float reward = ShapedReward(false);
  if (state && state->screenBuffer) PushScreen(state->screenBuffer->data(), false);
  const bool terminated = finished || dead;
  continue_game_ = dead && !finished;
  out.SetTerminated(terminated);
  WriteOutputs(out, reward);
}

// Bots join each episode anew (ViZDoom's own examples re-add them after every new episode).
void VizdoomEnv::AddBots() {
  if (num_bots_ == 0) return;
  game_->sendGameCommand("removebots");
  for (int i = 0; i < num_bots_; ++i) game_->sendGameCommand("addbot");
}

void VizdoomEnv::ReadGameVariables(const vzd::GameStatePtr& state) {
  last_gvs_ = gvs_;
  if (state) {
    gvs_ = state->gameVariables;
  } else {  // the episode finished: no state, but the engine still holds the final values
    gvs_.resize(vars_.size());
    for (size_t i = 0; i < vars_.size(); ++i) gvs_[i] = game_->getGameVariable(vars_[i]);
  }
}

float VizdoomEnv::ShapedReward(bool episode_start) {
  // DEATHCOUNT, HITCOUNT and DAMAGECOUNT are not reset by a new episode (ViZDoom issue 399): count from the start
  for (auto [idx, base] : {std::pair{hit_idx_, &hit_base_}, {damage_idx_, &damage_base_}, {death_idx_, &death_base_}}) {
    if (idx < 0) continue;
    if (episode_start) *base = gvs_[idx];
    gvs_[idx] -= *base;
  }
  if (episode_start) {
    last_gvs_ = gvs_;
    selected_weapon_ = -1;
    selected_weapon_steps_ = 0;
  }
  int weapon = -1;
  double weapon_ammo = 0;
  float reward = 0.f;
  for (size_t i = 0; i < vars_.size(); ++i) {
    double delta = gvs_[i] - last_gvs_[i];
    switch (vars_[i]) {
      case vzd::DAMAGECOUNT: delta = std::min(delta, 200.0); break;  // EnvPool: don't over-reward BFG, shotguns
      case vzd::HITCOUNT: delta = std::min(delta, 5.0); break;
      case vzd::SELECTED_WEAPON: weapon = static_cast<int>(gvs_[i]); break;
      case vzd::SELECTED_WEAPON_AMMO: weapon_ammo = gvs_[i]; break;
      case vzd::HEALTH:  // the engine reports -999900 around death (ViZDoom issue 202): hold the last valid value
        if (last_gvs_[i] < 0 && gvs_[i] < 0) {
          last_gvs_[i] = gvs_[i] = 100;
        } else if (gvs_[i] < 0) {
          gvs_[i] = last_gvs_[i];
        } else if (last_gvs_[i] < 0) {
          last_gvs_[i] = gvs_[i];
        }
        delta = gvs_[i] - last_gvs_[i];
        break;
      default: break;
    }
    // float accumulation of double products, as EnvPool sums
    reward += static_cast<float>(delta >= 0 ? delta * pos_[i] : -delta * neg_[i]);
  }
  if (weapon == selected_weapon_) {
    ++selected_weapon_steps_;
  } else {
    selected_weapon_ = weapon;
    selected_weapon_steps_ = 1;
  }
  if (weapon >= 0 && weapon < static_cast<int>(weapon_reward_.size()) && selected_weapon_steps_ >= weapon_duration_ &&
      static_cast<int>(weapon_ammo) > 0) {
    reward += static_cast<float>(weapon_reward_[weapon]);
  }
  return reward;
}

void VizdoomEnv::PushScreen(const uint8_t* planes, bool fill_all) {
  const size_t screen_plane = static_cast<size_t>(screen_h_) * screen_w_;
  const size_t native_plane = static_cast<size_t>(native_h_) * native_w_;
  const size_t obs_plane = static_cast<size_t>(img_h_) * img_w_;
  newest_ = (newest_ + 1) % stack_num_;
  uint8_t* dst = stack_.data() + frame_bytes_ * newest_;
  for (int ch = 0; ch < channels_; ++ch) {
    const uint8_t* src = planes + screen_plane * ch;
    const uint8_t* native = src;  // the engine renders at the scenario's resolution: resized from the screen
    if (halve_ || to_native_) {
      uint8_t* scaled = native_.data() + native_plane * ch;
      if (halve_) {
        HalveScreen(src, scaled);
      } else {
        to_native_->Run(nullptr, src, identity_, scaled, 1);
      }
      native = scaled;
    }
    if (to_obs_) {
      to_obs_->Run(nullptr, native, identity_, dst + obs_plane * ch, 1);
    } else {
      std::memcpy(dst + obs_plane * ch, native, obs_plane);
    }
  }
  if (fill_all) {
    for (int i = 0; i < stack_num_; ++i) {
      if (i != newest_) std::memcpy(stack_.data() + frame_bytes_ * i, dst, frame_bytes_);
    }
  }
}

// cv2's INTER_AREA takes a fast path for integer scales: a 2 x 2 shrink is (a + b + c + d + 2) >> 2 per pixel
// (its float path, which FrameResizer reproduces, can round the other way).
void VizdoomEnv::HalveScreen(const uint8_t* src, uint8_t* dst) const {
  for (int y = 0; y < native_h_; ++y) {
    const uint8_t* r0 = src + static_cast<size_t>(2 * y) * screen_w_;
    const uint8_t* r1 = r0 + screen_w_;
    for (int x = 0; x < native_w_; ++x) {
      dst[static_cast<size_t>(y) * native_w_ + x] =
          static_cast<uint8_t>((r0[2 * x] + r0[2 * x + 1] + r1[2 * x] + r1[2 * x + 1] + 2) >> 2);
    }
  }
}

void VizdoomEnv::WriteOutputs(Output& out, float reward) {
  out.SetReward(reward);
  uint8_t* o = out.Obs<uint8_t>(0);
  const int first = (newest_ + 1) % stack_num_;  // oldest first
  const size_t n1 = frame_bytes_ * (stack_num_ - first);
  std::memcpy(o, stack_.data() + frame_bytes_ * first, n1);
  if (first > 0) std::memcpy(o + n1, stack_.data(), frame_bytes_ * first);
  for (size_t i = 0; i < info_slot_.size(); ++i) {
    *out.Info<double>(static_cast<int>(i)) = info_slot_[i] >= 0 ? gvs_[info_slot_[i]] : 0.0;
  }
}

void VizdoomEnv::Render(uint8_t* rgb) {
  const size_t plane = static_cast<size_t>(native_h_) * native_w_;
  const bool bgr = game_->getScreenFormat() == vzd::CBCGCR;
  for (size_t p = 0; p < plane; ++p) {
    for (int k = 0; k < 3; ++k) {
      const int ch = channels_ == 1 ? 0 : (bgr ? 2 - k : k);
      rgb[3 * p + k] = native_[plane * ch + p];
    }
  }
}

}  // namespace pp::vizdoom
