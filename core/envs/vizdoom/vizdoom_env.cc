// The ViZDoom env: one vizdoom game per player of the env, driven through vizdoom's C++ API (engine set-up, buttons,
// screens, game variables, shaped rewards). Over 600 lines for one reason: the games' lifecycle (start, restart
// after a crash, their engine processes' shared memory and message queues, close) is one state machine.
#include "core/envs/vizdoom/vizdoom_env.h"

#include <cerrno>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace pp::vizdoom {

namespace {

// A UDP port for a hosted game, held for the env's lifetime: the host listens on a port, 5029 unless told, and two
// envs must not share one (the engines of one env would join the other's game). The kernel names a port that is
// free now (bind to port 0, then close: the engine binds it later); an flock on a per-port lock file in this
// user's folder then reserves it against every other env, of this process or another, that picks ports this way.
// Other programs may still take the port in between (not preventable without the engine's help).
std::pair<int, int> ReserveUdpPort() {
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("parallel_pool-" + std::to_string(getuid()))).string() +
      "/vizdoom-ports";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::permissions(dir.substr(0, dir.rfind('/')), std::filesystem::perms::owner_all, ec);
  for (int attempt = 0; attempt < 64; ++attempt) {
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
    const std::string path = dir + "/" + std::to_string(port) + ".lock";
    const int lock = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock < 0) continue;  // e.g. a file planted there: take another port
    if (flock(lock, LOCK_EX | LOCK_NB) == 0) return {port, lock};
    close(lock);  // another env holds this port: take another
  }
  throw std::runtime_error("ViZDoom: no UDP port could be reserved for the hosted game (64 attempts)");
}

// ViZDoom names an engine's shared memory and message queues (in /dev/shm) by its random instance id; an env records
// each of its engines' ids in its private folder (RecordInstance), so that they can be removed once the process that
// made them is gone: a SIGKILLed process never runs the games' close(), which removes them (10 MB of screen each).
constexpr const char* kInstancePrefix = "instance-";

// Removes the segments of the instance ids recorded in `dir` (a folder of a dead process of this user).
void RemoveRecordedSegments(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kInstancePrefix, 0) != 0) continue;
    const std::string id = name.substr(std::strlen(kInstancePrefix));
    if (id.empty() || !std::all_of(id.begin(), id.end(), ::isalnum)) continue;
    for (const char* base : {SM_NAME_BASE, MQ_CTR_NAME_BASE, MQ_DOOM_NAME_BASE}) {
      const std::string path = std::string("/dev/shm/") + base + id;
      struct stat st{};
      if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid()) unlink(path.c_str());
    }
  }
}

// A new folder only this user can use, for the engines' settings file (ViZDoom's default is _vizdoom.ini in the
// working directory; one fixed name in the shared temp folder would be raced on by every engine of every user) and
// the record of its engines' instance ids. The folder's name carries the creating process's id: folders of
// processes that are gone (killed before their envs were destroyed) are removed here, with the shared memory and
// queues of the engines they record, by the next process that makes one.
std::string MakePrivateDir() {
  namespace fs = std::filesystem;
  const fs::path tmp = fs::temp_directory_path();
  const std::string prefix = "parallel_pool-vizdoom-";
  std::error_code ec;
  for (fs::directory_iterator it(tmp, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const long pid = std::strtol(name.c_str() + prefix.size(), nullptr, 10);
    struct stat st{};
    if (pid <= 0 || lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid()) continue;
    if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
      RemoveRecordedSegments(it->path());
      std::error_code ignored;
      fs::remove_all(it->path(), ignored);
    }
  }
  std::string templ = (tmp / (prefix + std::to_string(getpid()) + "-XXXXXX")).string();
  if (mkdtemp(templ.data()) == nullptr) {
    throw std::runtime_error("ViZDoom: cannot create a private temp folder: " + std::string(std::strerror(errno)));
  }
  return templ;
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
  const int players = c.Get<int>("max_num_players");
  if (num_bots_ > 0 || players > 1) std::tie(port_, port_lock_) = ReserveUdpPort();
  private_dir_ = MakePrivateDir();
  engines_.resize(static_cast<size_t>(players));
  const unsigned engine_seed = EngineSeed(seed);  // one seed for all players: one game
  for (int p = 0; p < players; ++p) SetUpEngine(engines_[p], c, p, engine_seed);
  // every call into an engine runs on the Lockstep's threads, so that a call that never returns (its engine killed
  // holding its message queue's lock) cannot hold the caller: one player too (see vizdoom_env.h, TogetherOrStop)
  lockstep_ = std::make_unique<Lockstep>(players);
  try {
    StartEngines();
  } catch (...) {
    LeakGamesIfAbandoned();  // the members' destructors would close and free games a stuck init() still uses
    throw;
  }
  SetUpScreens(c);
}

bool VizdoomEnv::LeakGamesIfAbandoned() noexcept {
  if (!lockstep_ || !lockstep_->abandoned()) return false;
  // some player's call is still blocked inside its game (see Lockstep): the games are leaked, never closed or
  // freed, so that such a call, should it return, finds them intact
  for (auto& e : engines_) (void)e.game.release();
  return true;
}

VizdoomEnv::~VizdoomEnv() {
  if (!LeakGamesIfAbandoned()) {
    if (Several()) KillEngines();  // an engine of a network game may not answer close() while a peer is gone
    CloseGames();
  }
  const bool leaked = lockstep_ && lockstep_->abandoned();
  lockstep_.reset();  // joins its threads (detaches those still inside an abandoned call)
  ForgetEngineProcesses();
  if (port_lock_ >= 0) close(port_lock_);  // the port is free for other envs again
  std::error_code ec;
  // leaked games keep their segments (a stuck call may still use them): the folder, which records them, stays
  // for a later process to clean once this one is gone
  if (!private_dir_.empty() && !leaked) std::filesystem::remove_all(private_dir_, ec);
}

void VizdoomEnv::CloseGames() {
  // close() asks the engine to quit and waits for it: an engine that does not answer (stopped, hung) is killed
  // after kCloseLimitS. A close() that still does not return (blocked on a queue lock its killed engine left held)
  // is left to its thread, which owns the games, so destroying the env (and closing the pool) is bounded.
  struct Closing {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    std::vector<std::unique_ptr<Game>> games;
  };
  auto closing = std::make_shared<Closing>();
  for (auto& e : engines_) closing->games.push_back(std::move(e.game));
  std::thread closer([closing] {
    for (auto& game : closing->games) {
      try {
        if (game) game->close();  // stops the engine process and waits for it
      } catch (...) {             // a dead engine: nothing left to stop
      }
    }
    closing->games.clear();
    std::lock_guard<std::mutex> lk(closing->mu);
    closing->done = true;
    closing->cv.notify_all();
  });
  std::unique_lock<std::mutex> lk(closing->mu);
  auto done = [&] { return closing->done; };
  if (!closing->cv.wait_for(lk, std::chrono::seconds(kCloseLimitS), done)) {
    KillEngines();
    if (!closing->cv.wait_for(lk, std::chrono::seconds(kKilledLimitS), done)) {
      closer.detach();
      return;
    }
  }
  lk.unlock();
  closer.join();
}

// Everything before init(): paths, screen, mode, game args, seed, buttons and game variables (read back into the
// env's shared settings from player 0's game; every player has the same scenario).
void VizdoomEnv::SetUpEngine(Engine& e, const Config& c, int player, uint64_t engine_seed) {
  e.game = std::make_unique<Game>();
  vzd::DoomGame& game = *e.game;
  game.setViZDoomPath(FilePath(c, "vzd_path", false));
  game.setDoomGamePath(FilePath(c, "iwad_path", false));
  const std::string cfg = FilePath(c, "cfg_path", true);
  if (!cfg.empty()) game.loadConfig(cfg);
  native_h_ = game.getScreenHeight();
  native_w_ = game.getScreenWidth();
  if (native_w_ < 320) game.setScreenResolution(vzd::RES_320X240);
  game.setWindowVisible(false);
  // the engine's own settings file (ViZDoom's default: _vizdoom.ini in the working directory)
  game.setDoomConfigPath(private_dir_ + "/_vizdoom.ini");
  const std::string port = std::to_string(port_);
  if (player > 0) {
    game.addGameArgs("-join 127.0.0.1:" + port);  // the host sets the rules
  } else {
    // bots and several players need a hosted (network) game; the scenario's rules (e.g. -deathmatch) come from
    // game_args, after our defaults so that they can override them
    if (port_ > 0) game.addGameArgs("-host " + std::to_string(engines_.size()) + " -port " + port);
    // several players: a packet server (-netmode 1: the host relays every player's input) steps the same way
    // in every run; peer to peer (netmode 0) lets thread timing decide which tic a joiner's input reaches
    if (Several()) game.addGameArgs("-netmode 1 +sv_forcerespawn 1");
    game.addGameArgs(c.Get<std::string>("game_args"));
  }
  game.setMode(vzd::PLAYER);
  game.setEpisodeTimeout(static_cast<unsigned>((max_episode_steps_ + 1) * frame_skip_));
  const std::string wad = FilePath(c, "wad_path", true);
  if (!wad.empty()) game.setDoomScenarioPath(wad);
  game.setSeed(static_cast<unsigned>(engine_seed));
  game.setDoomMap(c.Get<std::string>("map_id"));
  for (auto v : InfoVariables()) game.addAvailableGameVariable(v);

  const std::vector<vzd::Button> buttons = game.getAvailableButtons();
  if (buttons.empty()) {  // the spec allows it (VizdoomCustom-v1's defaults); an engine without buttons does not
    throw std::invalid_argument("the scenario '" + cfg + "' declares no available_buttons" +
                                (cfg.empty() ? ": pass cfg_path=<your .cfg> (VizdoomCustom-v1 has none)" : ""));
  }
  e.action_buf.assign(buttons.size(), 0.0);
  if (player > 0) return;

  num_buttons_ = static_cast<int>(buttons.size());
  if (combined_) action_set_ = CombinedActions(c, buttons);
  vars_ = game.getAvailableGameVariables();
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
}

// After init(): the screen buffer's size is known (the same for every player); each engine gets its own
// resizers (they keep scratch rows) and frame stack.
void VizdoomEnv::SetUpScreens(const Config& c) {
  channels_ = engines_[0].game->getScreenChannels();
  screen_h_ = engines_[0].game->getScreenHeight();
  screen_w_ = engines_[0].game->getScreenWidth();
  const bool area = c.Get<bool>("use_inter_area_resize");
  halve_ = area && screen_h_ == 2 * native_h_ && screen_w_ == 2 * native_w_;
  for (int i = 0; i < 256; ++i) identity_[i] = static_cast<uint8_t>(i);
  frame_bytes_ = static_cast<size_t>(channels_) * img_h_ * img_w_;
  for (auto& e : engines_) {
    if (!halve_ && (screen_h_ != native_h_ || screen_w_ != native_w_)) {
      e.to_native = std::make_unique<FrameResizer>(screen_h_, screen_w_, native_h_, native_w_, area);
    }
    // cv2.resize to the same size copies
    if (img_h_ != native_h_ || img_w_ != native_w_) {
      e.to_obs = std::make_unique<FrameResizer>(native_h_, native_w_, img_h_, img_w_, area);
    }
    if (halve_ || e.to_native) e.native.assign(static_cast<size_t>(channels_) * native_h_ * native_w_, 0);
    e.stack.assign(frame_bytes_ * stack_num_, 0);
  }
}

// EnvPool seeds the engine with seed + env_id; 64-bit seeds beyond that range draw from the env's generator (just
// seeded with `seed`).
unsigned VizdoomEnv::EngineSeed(uint64_t seed) {
  return seed <= 0xffffffffULL ? static_cast<unsigned>(seed) : static_cast<unsigned>(gen_());
}

void VizdoomEnv::Reseeded(uint64_t seed) { reseed_ = EngineSeed(seed); }

void VizdoomEnv::CheckUsable() const {
  if (lockstep_ && lockstep_->abandoned()) {
    throw std::runtime_error(
        "ViZDoom: this env is out of use: a call of one of its engines never returned after the engines were "
        "killed (see the error of that step); close the pool and make a new one");
  }
}

void VizdoomEnv::Reset(Output& out) {
  CheckUsable();
  // reset(seed=s): the engine draws each episode's seed from a generator seeded with s, so reseeding it and
  // starting a new episode replays the episodes of an env made with seed s
  const std::optional<unsigned> reseed = std::exchange(reseed_, std::nullopt);
  if (reseed) {
    for (auto& e : engines_) e.game->setSeed(*reseed);
  }
  const bool dead = std::any_of(engines_.begin(), engines_.end(), [](auto& e) { return !e.game->isRunning(); });
  if (dead) {  // an engine died (the step that noticed raised): start new ones
    RestartEngines();
  } else if (!started_ && !reseed) {
    // init() began the first episode
  } else if (continue_game_ && !reseed) {
    TogetherOrStop(  // EnvPool: one no-op step (player 0's)
        [&](int p) {
          if (p == 0) engines_[0].game->makeAction(std::vector<double>(num_buttons_, 0.0), frame_skip_);
        },
        kCallLimitS);
  } else if (Several()) {
    TogetherOrStop([&](int p) { engines_[p].game->newEpisode(); }, kCallLimitS);  // every player, together
    AddBots();
  } else {
    TogetherOrStop(
        [&](int) {
          if (lmp_prefix_.empty()) {
            engines_[0].game->newEpisode();
          } else {
            engines_[0].game->newEpisode(lmp_prefix_ + std::to_string(episode_count_) + ".lmp");
          }
        },
        kCallLimitS);
    AddBots();
  }
  started_ = true;
  continue_game_ = false;
  steps_ = 0;
  ++episode_count_;
  for (int p = 0; p < NumPlayers(); ++p) Observe(engines_[p], out, p, true);
}

void VizdoomEnv::Step(const ActionView& action, Output& out) {
  CheckUsable();
  for (int p = 0; p < NumPlayers(); ++p) SetAction(engines_[p], action, p);
  if (!Several()) {
    TogetherOrStop([&](int) { engines_[0].game->advanceAction(frame_skip_, true); }, kCallLimitS);
  } else {
    // one tic at a time, every player together (see Lockstep); the state is read after the last
    for (int t = 0; t < frame_skip_; ++t) {
      const bool last = t == frame_skip_ - 1;
      TogetherOrStop([&](int p) { engines_[p].game->advanceAction(1, last); }, kCallLimitS);
      if (engines_[0].game->isEpisodeFinished()) break;
    }
  }
  ++steps_;
  const bool finished = engines_[0].game->isEpisodeFinished();
  const bool dead = episodic_life_ && engines_[0].game->isPlayerDead();
  for (int p = 0; p < NumPlayers(); ++p) Observe(engines_[p], out, p, false);
  continue_game_ = dead && !finished;
  out.SetTerminated(finished || dead);
}

void VizdoomEnv::SetAction(Engine& e, const ActionView& action, int player) {
  if (combined_) {
    e.game->setAction(action_set_[action.Discrete(player)]);
  } else {
    const double* a = action.Get<double>(0, player);
    e.action_buf.assign(a, a + num_buttons_);
    e.game->setAction(e.action_buf);
  }
}

void VizdoomEnv::Observe(Engine& e, Output& out, int player, bool episode_start) {
  // a finished episode has no state (a step that ended it early kept the previous tic's)
  vzd::GameStatePtr state = e.game->isEpisodeFinished() ? nullptr : e.game->getState();
  ReadGameVariables(e, state);
  const float reward = ShapedReward(e, episode_start);
  if (state && state->screenBuffer) {
    PushScreen(e, state->screenBuffer->data(), episode_start);
    e.shown = std::move(state);
  }
  WriteOutputs(e, out, player, reward);
}

// Bots join each episode anew (ViZDoom's own examples re-add them after every new episode).
void VizdoomEnv::AddBots() {
  if (num_bots_ == 0) return;
  engines_[0].game->sendGameCommand("removebots");
  for (int i = 0; i < num_bots_; ++i) engines_[0].game->sendGameCommand("addbot");
}

void VizdoomEnv::TogetherOrStop(const std::function<void(int)>& fn, int limit_s) {
  lockstep_->Run(fn, Limits(limit_s), [this] { KillEngines(); });
}

// SIGKILL the engine processes this env started (through the pidfds FindEngineProcesses opened: never another
// env's engine, nor a process that reused a pid). A call blocked in a killed engine then returns with ViZDoom's
// process-exit exception. Never throws (Lockstep's unstick and Abort must not).
void VizdoomEnv::KillEngines() const noexcept {
  for (const auto& e : engines_) {
    if (e.pidfd >= 0) syscall(SYS_pidfd_send_signal, e.pidfd, SIGKILL, nullptr, 0);
  }
}

// After the engines started: the process of each, found once as the child of this process whose command line
// carries the engine's instance id (random, one per DoomGame), and held as a pidfd. Until this process reaps it
// (ViZDoom's thread waits for it) a child's pid cannot be reused, so the pidfd names that very engine.
void VizdoomEnv::FindEngineProcesses(bool strict) {
  ForgetEngineProcesses();
  const pid_t self = getpid();
  namespace fs = std::filesystem;
  for (auto& e : engines_) {
    std::string id;
    try {
      id = e.game->InstanceId();
    } catch (...) {  // not running (yet): only a strict lookup, after a successful start, must find every engine
      if (strict) throw;
      continue;
    }
    std::error_code ec;
    for (fs::directory_iterator it("/proc", fs::directory_options::skip_permission_denied, ec), end;
         !ec && it != end && e.pidfd < 0; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
      std::ifstream stat_file(it->path() / "stat");
      std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
      const size_t close_paren = stat.rfind(')');
      if (close_paren == std::string::npos) continue;
      std::istringstream rest(stat.substr(close_paren + 2));
      std::string state;
      pid_t ppid = 0;
      rest >> state >> ppid;
      if (ppid != self) continue;
      std::ifstream cmd_file(it->path() / "cmdline");
      bool ours = false;
      for (std::string arg; !ours && std::getline(cmd_file, arg, '\0');) ours = arg == id;
      if (ours) e.pidfd = static_cast<int>(syscall(SYS_pidfd_open, std::strtol(name.c_str(), nullptr, 10), 0));
    }
    ClaimInstance(id);
    if (e.pidfd < 0 && strict) {
      throw std::runtime_error("ViZDoom: cannot find the engine process just started (instance " + id + ")");
    }
  }
}

// A started engine's segments: recorded (an empty file per engine in the env's private folder, naming its instance
// id: see RemoveRecordedSegments), and its shared memory (its screen) made this user's only. The engine makes that
// segment itself, mode 0644 whatever the umask (boost sets the mode after creating it), so it is readable by other
// users from then until this chmod, right after the engine's start.
void VizdoomEnv::ClaimInstance(const std::string& id) const {
  if (id.empty() || !std::all_of(id.begin(), id.end(), ::isalnum)) return;
  if (!private_dir_.empty()) std::ofstream(private_dir_ + "/" + kInstancePrefix + id);
  chmod((std::string("/dev/shm/") + SM_NAME_BASE + id).c_str(), 0600);
}

void VizdoomEnv::ForgetEngineProcesses() noexcept {
  for (auto& e : engines_) {
    if (e.pidfd >= 0) close(e.pidfd);
    e.pidfd = -1;
  }
}

// Starts the engine processes (init() begins the first episode) and adds the bots. Several players start together:
// the host's init waits until every player has joined.
void VizdoomEnv::StartEngines() {
  // Each engine makes ./_vizdoom/ in the working directory if it is missing, and exits when its mkdir fails -- also
  // with "File exists", when engines started together race to make it (a fresh working directory; CI saw it once).
  // Made here first, so that every engine finds it. An error (a file of that name, a read-only folder) is the
  // engine's to report, as before.
  std::error_code ignored;
  std::filesystem::create_directory("_vizdoom", ignored);
  lockstep_->Run([&](int p) { engines_[p].game->init(); }, Limits(kStartLimitS),
                 [this] {
                   // a stalled start: the engines are found (those already running) and stopped
                   try {
                     FindEngineProcesses(false);
                   } catch (...) {
                   }
                   KillEngines();
                 });
  FindEngineProcesses(true);
  AddBots();
}

// After an engine died. Several players: one may still run, waiting for its peers: stop them all first.
void VizdoomEnv::RestartEngines() {
  if (Several()) {
    KillEngines();
    // close() of a killed engine returns at once -- unless it died holding a lock of its message queue: bounded by
    // the Lockstep like any other call of the players
    TogetherOrStop(
        [&](int p) {
          try {
            engines_[p].game->close();
          } catch (...) {  // a dead engine: nothing left to stop
          }
        },
        kCloseLimitS);
  }
  StartEngines();
}

void VizdoomEnv::ReadGameVariables(Engine& e, const vzd::GameStatePtr& state) {
  e.last_gvs = e.gvs;
  if (state) {
    e.gvs = state->gameVariables;
  } else {  // the episode finished: no state, but the engine still holds the final values
    e.gvs.resize(vars_.size());
    for (size_t i = 0; i < vars_.size(); ++i) e.gvs[i] = e.game->getGameVariable(vars_[i]);
  }
}

float VizdoomEnv::ShapedReward(Engine& e, bool episode_start) {
  // DEATHCOUNT, HITCOUNT and DAMAGECOUNT are not reset by a new episode (ViZDoom issue 399): count from the start
  for (auto [idx, base] :
       {std::pair{hit_idx_, &e.hit_base}, {damage_idx_, &e.damage_base}, {death_idx_, &e.death_base}}) {
    if (idx < 0) continue;
    if (episode_start) *base = e.gvs[idx];
    e.gvs[idx] -= *base;
  }
  if (episode_start) {
    e.last_gvs = e.gvs;
    e.selected_weapon = -1;
    e.selected_weapon_steps = 0;
  }
  int weapon = -1;
  double weapon_ammo = 0;
  float reward = 0.f;
  for (size_t i = 0; i < vars_.size(); ++i) {
    double delta = e.gvs[i] - e.last_gvs[i];
    switch (vars_[i]) {
      case vzd::DAMAGECOUNT: delta = std::min(delta, 200.0); break;  // EnvPool: don't over-reward BFG, shotguns
      case vzd::HITCOUNT: delta = std::min(delta, 5.0); break;
      case vzd::SELECTED_WEAPON: weapon = static_cast<int>(e.gvs[i]); break;
      case vzd::SELECTED_WEAPON_AMMO: weapon_ammo = e.gvs[i]; break;
      case vzd::HEALTH:  // the engine reports -999900 around death (ViZDoom issue 202): hold the last valid value
        if (e.last_gvs[i] < 0 && e.gvs[i] < 0) {
          e.last_gvs[i] = e.gvs[i] = 100;
        } else if (e.gvs[i] < 0) {
          e.gvs[i] = e.last_gvs[i];
        } else if (e.last_gvs[i] < 0) {
          e.last_gvs[i] = e.gvs[i];
        }
        delta = e.gvs[i] - e.last_gvs[i];
        break;
      default: break;
    }
    // float accumulation of double products, as EnvPool sums
    reward += static_cast<float>(delta >= 0 ? delta * pos_[i] : -delta * neg_[i]);
  }
  if (weapon == e.selected_weapon) {
    ++e.selected_weapon_steps;
  } else {
    e.selected_weapon = weapon;
    e.selected_weapon_steps = 1;
  }
  if (weapon >= 0 && weapon < static_cast<int>(weapon_reward_.size()) && e.selected_weapon_steps >= weapon_duration_ &&
      static_cast<int>(weapon_ammo) > 0) {
    reward += static_cast<float>(weapon_reward_[weapon]);
  }
  return reward;
}

void VizdoomEnv::PushScreen(Engine& e, const uint8_t* planes, bool fill_all) {
  const size_t screen_plane = static_cast<size_t>(screen_h_) * screen_w_;
  const size_t native_plane = static_cast<size_t>(native_h_) * native_w_;
  const size_t obs_plane = static_cast<size_t>(img_h_) * img_w_;
  e.newest = (e.newest + 1) % stack_num_;
  uint8_t* dst = e.stack.data() + frame_bytes_ * e.newest;
  for (int ch = 0; ch < channels_; ++ch) {
    const uint8_t* src = planes + screen_plane * ch;
    const uint8_t* native = src;  // the engine renders at the scenario's resolution: resized from the screen
    if (halve_ || e.to_native) {
      uint8_t* scaled = e.native.data() + native_plane * ch;
      if (halve_) {
        HalveScreen(src, scaled);
      } else {
        e.to_native->Run(nullptr, src, identity_, scaled, 1);
      }
      native = scaled;
    }
    if (e.to_obs) {
      e.to_obs->Run(nullptr, native, identity_, dst + obs_plane * ch, 1);
    } else {
      std::memcpy(dst + obs_plane * ch, native, obs_plane);
    }
  }
  if (fill_all) {
    for (int i = 0; i < stack_num_; ++i) {
      if (i != e.newest) std::memcpy(e.stack.data() + frame_bytes_ * i, dst, frame_bytes_);
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

void VizdoomEnv::WriteOutputs(Engine& e, Output& out, int player, float reward) {
  out.SetReward(reward, player);
  uint8_t* o = out.Obs<uint8_t>(0, player);
  const int first = (e.newest + 1) % stack_num_;  // oldest first
  const size_t n1 = frame_bytes_ * (stack_num_ - first);
  std::memcpy(o, e.stack.data() + frame_bytes_ * first, n1);
  if (first > 0) std::memcpy(o + n1, e.stack.data(), frame_bytes_ * first);
  // the info rows are per player with several players, per env (the same row) with one
  for (size_t i = 0; i < info_slot_.size(); ++i) {
    *out.Info<double>(static_cast<int>(i), player) = info_slot_[i] >= 0 ? e.gvs[info_slot_[i]] : 0.0;
  }
}

void VizdoomEnv::Render(uint8_t* rgb) {
  CheckUsable();
  const Engine& e = engines_[0];
  const size_t plane = static_cast<size_t>(native_h_) * native_w_;
  // the screen at the scenario's size: resized into `native`, or the engine's buffer itself
  const uint8_t* screen = e.native.empty() ? (e.shown ? e.shown->screenBuffer->data() : nullptr) : e.native.data();
  if (screen == nullptr) {
    std::memset(rgb, 0, plane * 3);
    return;
  }
  const bool bgr = e.game->getScreenFormat() == vzd::CBCGCR;
  for (size_t p = 0; p < plane; ++p) {
    for (int k = 0; k < 3; ++k) {
      const int ch = channels_ == 1 ? 0 : (bgr ? 2 - k : k);
      rgb[3 * p + k] = screen[plane * ch + p];
    }
  }
}

}  // namespace pp::vizdoom
