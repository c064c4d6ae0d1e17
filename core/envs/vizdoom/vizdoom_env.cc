#include "core/envs/vizdoom/vizdoom_env.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <exception>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

namespace pp::vizdoom {

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

namespace {

// A UDP port that is free now, for a multi-player game's host (the small race with other programs is accepted).
int FreeUdpPort() {
  const int fd = socket(AF_INET, SOCK_DGRAM, 0);
  if (fd < 0) throw std::runtime_error("ViZDoom: cannot open a UDP socket to pick the game's port");
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
  if (port < 0) throw std::runtime_error("ViZDoom: cannot find a free UDP port for the multi-player game");
  return port;
}

// SIGKILL the engine process started with `+viz_instance_id <id>` (found in /proc): a networked engine whose
// peer died waits for it forever, and only its own death wakes the thread that drives it.
void KillEngine(const std::string& instance_id) {
  const std::string needle = std::string("+viz_instance_id") + '\0' + instance_id + '\0';
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (cmdline.find(needle) != std::string::npos) kill(static_cast<pid_t>(std::stol(name)), SIGKILL);
  }
}

}  // namespace

VizdoomEnv::VizdoomEnv(const Config& c, int env_id, uint64_t seed)
    : Env(c, env_id, seed),
      num_bots_(c.Get<int>("num_bots")),
      stack_num_(c.Get<int>("stack_num")),
      frame_skip_(c.Get<int>("frame_skip")),
      img_h_(c.Get<int>("img_height")),
      img_w_(c.Get<int>("img_width")),
      max_episode_steps_(c.Get<int>("max_episode_steps")),
      weapon_duration_(c.Get<int>("weapon_duration")),
      episodic_life_(c.Get<bool>("episodic_life")),
      combined_(c.Get<bool>("use_combined_action")) {
  const std::string lmp_dir = c.Get<std::string>("lmp_save_dir");
  if (!lmp_dir.empty()) lmp_prefix_ = lmp_dir + "/env_" + std::to_string(env_id) + "_";
  // EnvPool seeds the engine with seed + env_id; 64-bit seeds beyond that range draw from the env's generator
  const uint64_t engine_seed = seed <= 0xffffffffULL ? seed : gen_();
  players_.resize(c.Get<int>("max_num_players"));
  const bool hosted = players_.size() > 1 || num_bots_ > 0;
  const int port = hosted ? FreeUdpPort() : 0;
  for (size_t i = 0; i < players_.size(); ++i) {
    std::string role;
    if (hosted) {
      role = i == 0 ? "-host " + std::to_string(players_.size()) + " -port " + std::to_string(port) +
                          " +viz_connect_timeout 60"
                    : "-join 127.0.0.1:" + std::to_string(port);
      role += " +name Player" + std::to_string(i) + " +colorset " + std::to_string(i);
    }
    players_[i].args = role;
    players_[i].game = MakeGame(c, engine_seed, role);
  }

  vzd::DoomGame& g = *players_[0].game;
  const std::vector<vzd::Button> buttons = g.getAvailableButtons();
  num_buttons_ = static_cast<int>(buttons.size());
  if (combined_) action_set_ = CombinedActions(c, buttons);
  action_buf_.assign(buttons.size(), 0.0);
  vars_ = g.getAvailableGameVariables();
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

  StartGames();
  channels_ = g.getScreenChannels();
  screen_h_ = g.getScreenHeight();
  screen_w_ = g.getScreenWidth();
  const bool area = c.Get<bool>("use_inter_area_resize");
  halve_ = area && screen_h_ == 2 * native_h_ && screen_w_ == 2 * native_w_;
  if (!halve_ && (screen_h_ != native_h_ || screen_w_ != native_w_)) {
    to_native_ = std::make_unique<atari::FrameResizer>(screen_h_, screen_w_, native_h_, native_w_, area);
  }
  to_obs_ = std::make_unique<atari::FrameResizer>(native_h_, native_w_, img_h_, img_w_, area);
  for (int i = 0; i < 256; ++i) identity_[i] = static_cast<uint8_t>(i);
  frame_bytes_ = static_cast<size_t>(channels_) * img_h_ * img_w_;
  for (Player& p : players_) {
    p.native.assign(static_cast<size_t>(channels_) * native_h_ * native_w_, 0);
    p.stack.assign(frame_bytes_ * stack_num_, 0);
  }
}

VizdoomEnv::~VizdoomEnv() {
  for (Player& p : players_) {
    try {
      // a networked engine may wait for a peer that is gone: kill it rather than wait (close() then reaps it)
      if (players_.size() > 1) KillEngine(p.game->getInstanceId());
      p.game->close();  // stops the engine process and waits for it
    } catch (...) {     // a dead engine: nothing left to stop
    }
  }
}

std::unique_ptr<vzd::DoomGame> VizdoomEnv::MakeGame(const Config& c, uint64_t seed, const std::string& role_args) {
  auto game = std::make_unique<vzd::DoomGame>();
  game->setViZDoomPath(FilePath(c, "vzd_path", false));
  game->setDoomGamePath(FilePath(c, "iwad_path", false));
  const std::string cfg = FilePath(c, "cfg_path", true);
  if (!cfg.empty()) game->loadConfig(cfg);
  native_h_ = game->getScreenHeight();
  native_w_ = game->getScreenWidth();
  if (native_w_ < 320) game->setScreenResolution(vzd::RES_320X240);
  game->setWindowVisible(false);
  // the engine's own settings file (ViZDoom's default: _vizdoom.ini in the working directory)
  game->setDoomConfigPath((std::filesystem::temp_directory_path() / "parallel_pool_vizdoom.ini").string());
  if (!role_args.empty()) game->addGameArgs(role_args);
  game->addGameArgs(c.Get<std::string>("game_args"));
  game->setMode(vzd::PLAYER);
  game->setEpisodeTimeout(static_cast<unsigned>((max_episode_steps_ + 1) * frame_skip_));
  const std::string wad = FilePath(c, "wad_path", true);
  if (!wad.empty()) game->setDoomScenarioPath(wad);
  game->setSeed(static_cast<unsigned>(seed));
  game->setDoomMap(c.Get<std::string>("map_id"));
  for (auto v : InfoVariables()) game->addAvailableGameVariable(v);
  return game;
}

// Start (or restart) every player's engine; a networked game starts only when all players have joined, so they
// start together.
void VizdoomEnv::StartGames() {
  ForEachPlayer([](Player& p) {
    p.game->close();
    p.game->init();
  });
  for (int i = 0; i < num_bots_; ++i) {
    if (i == 0) players_[0].game->sendGameCommand("removebots");
    players_[0].game->sendGameCommand("addbot");
  }
}

// fn(player) for every player. Several players of one networked game advance in lockstep, so each runs on its own
// thread (engine steps take milliseconds: a thread per call costs little). If one fails (e.g. its engine died),
// the others would wait for it forever: their engines are killed, which makes their calls fail too.
void VizdoomEnv::ForEachPlayer(const std::function<void(Player&)>& fn) {
  if (players_.size() == 1) {
    fn(players_[0]);
    return;
  }
  std::mutex mu;
  std::condition_variable cv;
  size_t finished = 0;
  std::exception_ptr error;
  std::vector<std::thread> threads;
  for (Player& p : players_) {
    threads.emplace_back([&, player = &p] {
      std::exception_ptr e;
      try {
        fn(*player);
      } catch (...) {
        e = std::current_exception();
      }
      std::lock_guard<std::mutex> lk(mu);
      if (e && !error) error = e;
      ++finished;
      cv.notify_all();
    });
  }
  {
    std::unique_lock<std::mutex> lk(mu);
    cv.wait(lk, [&] { return finished == players_.size() || error; });
    if (error && finished < players_.size()) {
      lk.unlock();
      for (Player& p : players_) KillEngine(p.game->getInstanceId());
    }
  }
  for (auto& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

void VizdoomEnv::NewEpisode(Player& p) {
  if (lmp_prefix_.empty()) {
    p.game->newEpisode();
  } else {
    const std::string player = players_.size() > 1 ? "_p" + std::to_string(&p - players_.data()) : "";
    p.game->newEpisode(lmp_prefix_ + std::to_string(episode_count_) + player + ".lmp");
  }
  if (&p == &players_[0]) {
    for (int i = 0; i < num_bots_; ++i) {
      if (i == 0) p.game->sendGameCommand("removebots");
      p.game->sendGameCommand("addbot");
    }
  }
}

void VizdoomEnv::Reset(Output& out) {
  const bool running = std::all_of(players_.begin(), players_.end(), [](Player& p) { return p.game->isRunning(); });
  if (!running) {
    StartGames();  // an engine died: start them all again (a new game, hence a new episode)
  } else if (!started_) {
    // init() began the first episode
  } else if (continue_game_) {
    ForEachPlayer([&](Player& p) {
      p.game->makeAction(std::vector<double>(num_buttons_, 0.0), frame_skip_);  // EnvPool: one no-op step
    });
  } else {
    ForEachPlayer([&](Player& p) { NewEpisode(p); });
  }
  started_ = true;
  continue_game_ = false;
  ++episode_count_;
  Observe(out, true);
}

void VizdoomEnv::Step(const ActionView& action, Output& out) {
  for (size_t i = 0; i < players_.size(); ++i) {
    const int player = static_cast<int>(i);
    if (combined_) {
      players_[i].game->setAction(action_set_[action.Discrete(player)]);
    } else {
      const double* a = action.Get<double>(0, player);
      action_buf_.assign(a, a + num_buttons_);
      players_[i].game->setAction(action_buf_);
    }
  }
  ForEachPlayer([&](Player& p) { p.game->advanceAction(frame_skip_, true); });
  const bool finished = players_[0].game->isEpisodeFinished();
  const bool dead =
      episodic_life_ && std::any_of(players_.begin(), players_.end(), [](Player& p) { return p.game->isPlayerDead(); });
  const bool terminated = finished || dead;
  continue_game_ = dead && !finished;
  out.SetTerminated(terminated);
  Observe(out, false);
}

// Every player's observation, game variables and shaped reward into its rows.
void VizdoomEnv::Observe(Output& out, bool episode_start) {
  for (size_t i = 0; i < players_.size(); ++i) {
    Player& p = players_[i];
    vzd::GameStatePtr state = p.game->getState();
    ReadGameVariables(p, state);
    const float reward = ShapedReward(p, episode_start);
    if (state && state->screenBuffer) PushScreen(p, state->screenBuffer->data(), episode_start);
    WriteOutputs(out, static_cast<int>(i), reward);
  }
}

void VizdoomEnv::ReadGameVariables(Player& p, const vzd::GameStatePtr& state) {
  p.last_gvs = p.gvs;
  if (state) {
    p.gvs = state->gameVariables;
  } else {  // the episode finished: no state, but the engine still holds the final values
    p.gvs.resize(vars_.size());
    for (size_t i = 0; i < vars_.size(); ++i) p.gvs[i] = p.game->getGameVariable(vars_[i]);
  }
}

float VizdoomEnv::ShapedReward(Player& p, bool episode_start) {
  std::vector<double>& gvs = p.gvs;
  std::vector<double>& last = p.last_gvs;
  // DEATHCOUNT, HITCOUNT and DAMAGECOUNT are not reset by a new episode (ViZDoom issue 399): count from the start
  for (auto [idx, base] :
       {std::pair{hit_idx_, &p.hit_base}, {damage_idx_, &p.damage_base}, {death_idx_, &p.death_base}}) {
    if (idx < 0) continue;
    if (episode_start) *base = gvs[idx];
    gvs[idx] -= *base;
  }
  if (episode_start) {
    last = gvs;
    p.selected_weapon = -1;
    p.selected_weapon_steps = 0;
  }
  int weapon = -1;
  double weapon_ammo = 0;
  float reward = 0.f;
  for (size_t i = 0; i < vars_.size(); ++i) {
    double delta = gvs[i] - last[i];
    switch (vars_[i]) {
      case vzd::DAMAGECOUNT: delta = std::min(delta, 200.0); break;  // EnvPool: don't over-reward BFG, shotguns
      case vzd::HITCOUNT: delta = std::min(delta, 5.0); break;
      case vzd::SELECTED_WEAPON: weapon = static_cast<int>(gvs[i]); break;
      case vzd::SELECTED_WEAPON_AMMO: weapon_ammo = gvs[i]; break;
      case vzd::HEALTH:  // the engine reports -999900 around death (ViZDoom issue 202): hold the last valid value
        if (last[i] < 0 && gvs[i] < 0) {
          last[i] = gvs[i] = 100;
        } else if (gvs[i] < 0) {
          gvs[i] = last[i];
        } else if (last[i] < 0) {
          last[i] = gvs[i];
        }
        delta = gvs[i] - last[i];
        break;
      default: break;
    }
    // float accumulation of double products, as EnvPool sums
    reward += static_cast<float>(delta >= 0 ? delta * pos_[i] : -delta * neg_[i]);
  }
  if (weapon == p.selected_weapon) {
    ++p.selected_weapon_steps;
  } else {
    p.selected_weapon = weapon;
    p.selected_weapon_steps = 1;
  }
  if (weapon >= 0 && weapon < static_cast<int>(weapon_reward_.size()) && p.selected_weapon_steps >= weapon_duration_ &&
      static_cast<int>(weapon_ammo) > 0) {
    reward += static_cast<float>(weapon_reward_[weapon]);
  }
  return reward;
}

void VizdoomEnv::PushScreen(Player& p, const uint8_t* planes, bool fill_all) {
  const size_t screen_plane = static_cast<size_t>(screen_h_) * screen_w_;
  const size_t native_plane = static_cast<size_t>(native_h_) * native_w_;
  const size_t obs_plane = static_cast<size_t>(img_h_) * img_w_;
  p.newest = (p.newest + 1) % stack_num_;
  uint8_t* dst = p.stack.data() + frame_bytes_ * p.newest;
  for (int ch = 0; ch < channels_; ++ch) {
    const uint8_t* src = planes + screen_plane * ch;
    uint8_t* native = p.native.data() + native_plane * ch;
    if (halve_) {
      HalveScreen(src, native);
    } else if (to_native_) {
      to_native_->Run(nullptr, src, identity_, native, 1);
    } else {
      std::memcpy(native, src, native_plane);
    }
    to_obs_->Run(nullptr, native, identity_, dst + obs_plane * ch, 1);
  }
  if (fill_all) {
    for (int i = 0; i < stack_num_; ++i) {
      if (i != p.newest) std::memcpy(p.stack.data() + frame_bytes_ * i, dst, frame_bytes_);
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

void VizdoomEnv::WriteOutputs(Output& out, int idx, float reward) {
  const Player& p = players_[idx];
  out.SetReward(reward, idx);
  uint8_t* o = out.Obs<uint8_t>(0, idx);
  const int first = (p.newest + 1) % stack_num_;  // oldest first
  const size_t n1 = frame_bytes_ * (stack_num_ - first);
  std::memcpy(o, p.stack.data() + frame_bytes_ * first, n1);
  if (first > 0) std::memcpy(o + n1, p.stack.data(), frame_bytes_ * first);
  // per-player info rows when the env has several players (the spec declares them so), else the env's row
  const int row = players_.size() > 1 ? idx : 0;
  for (size_t i = 0; i < info_slot_.size(); ++i) {
    *out.Info<double>(static_cast<int>(i), row) = info_slot_[i] >= 0 ? p.gvs[info_slot_[i]] : 0.0;
  }
}

// Player 0's view at the scenario's screen size.
void VizdoomEnv::Render(uint8_t* rgb) {
  const Player& p = players_[0];
  const size_t plane = static_cast<size_t>(native_h_) * native_w_;
  const bool bgr = p.game->getScreenFormat() == vzd::CBCGCR;
  for (size_t i = 0; i < plane; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int ch = channels_ == 1 ? 0 : (bgr ? 2 - k : k);
      rgb[3 * i + k] = p.native[plane * ch + i];
    }
  }
}

}  // namespace pp::vizdoom
