// Engine calls on single envs outside stepping, each refused while the env has a result pending: env state
// (get/set), snapshots and their restore, per-env configs (set_config), and C++ rendering.
#include "core/engine/engine.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <system_error>

#include "core/engine/engine_internal.h"

namespace pp {

void Engine::CheckEnvId(int64_t env_id) const {
  if (env_id < 0 || env_id >= opts_.num_envs) {
    throw std::out_of_range("env_id " + std::to_string(env_id) + " is out of range: this pool has env ids 0.." +
                            std::to_string(opts_.num_envs - 1));
  }
}

int Engine::num_players(int64_t env_id) const {
  CheckEnvId(env_id);
  return slots_[env_id].players;
}

Engine::Slot& Engine::IdleSlot(int64_t env_id) {
  CheckOpen();
  CheckEnvId(env_id);
  if (pending_[env_id]) {
    throw std::invalid_argument("env " + std::to_string(env_id) + " has a result pending; recv() it first");
  }
  return slots_[env_id];
}

std::vector<double> Engine::GetState(int64_t env_id) { return IdleSlot(env_id).env->GetState(); }

void Engine::SetState(int64_t env_id, const std::vector<double>& state) {
  Slot& s = IdleSlot(env_id);
  for (size_t i = 0; i < state.size(); ++i) {  // no env has a NaN or infinite state variable
    if (!std::isfinite(state[i])) {
      throw std::invalid_argument("set_state: value " + std::to_string(i) + " of the state is not finite (" +
                                  std::to_string(state[i]) + ")");
    }
  }
  s.env->SetState(state);  // each env validates its state (lengths may vary: Blackjack's hands)
  s.done = false;          // the env is mid-episode in the given state: its next step steps it
}

std::vector<Engine::EnvSnapshot> Engine::Snapshot(const int* env_ids, int k) {
  for (int i = 0; i < k; ++i) IdleSlot(env_ids[i]);
  std::vector<EnvSnapshot> out(k);
  for (int i = 0; i < k; ++i) {
    const Slot& s = slots_[env_ids[i]];
    out[i] = {s.env->SaveState(), s.env->GeneratorState(), s.elapsed, s.done};
  }
  return out;
}

void Engine::Restore(const int* env_ids, int k, const std::vector<EnvSnapshot>& snapshots) {
  if (snapshots.size() != static_cast<size_t>(k)) throw std::invalid_argument("restore: one snapshot per env id");
  std::vector<EnvSnapshot> before = Snapshot(env_ids, k);  // also checks every id is idle
  // What the engine itself keeps is checked for every env before any env changes; each env checks its own state
  // (LoadState, SetGeneratorState) as it is applied, and a refusal there puts the envs already restored back.
  const int64_t limit = opts_.max_episode_steps;
  for (int i = 0; i < k; ++i) {
    const EnvSnapshot& snap = snapshots[i];
    for (size_t j = 0; j < snap.env.size(); ++j) {
      if (!std::isfinite(snap.env[j])) {  // no env has a NaN or infinite state variable
        throw std::invalid_argument("restore: value " + std::to_string(j) + " of a state is not finite");
      }
    }
    // an episode in progress has stepped fewer than max_episode_steps times (its step that reaches the limit ends
    // it): so the count cannot pass the limit, nor overflow the int it is kept in, however the envs step on
    const int64_t most = snap.done ? limit : limit - 1;
    if (snap.elapsed < 0 || snap.elapsed > most) {
      throw std::invalid_argument("restore: elapsed must be in [0, " + std::to_string(most) + "] for an episode " +
                                  (snap.done ? "that has ended" : "in progress") + " (max_episode_steps " +
                                  std::to_string(limit) + "), got " + std::to_string(snap.elapsed));
    }
  }
  int done = 0;
  auto apply = [&](Slot& s, const EnvSnapshot& snap) {
    s.env->LoadState(snap.env);
    s.env->SetGeneratorState(snap.generator);
    s.elapsed = static_cast<int>(snap.elapsed);
    s.done = snap.done;
  };
  try {
    for (; done < k; ++done) apply(slots_[env_ids[done]], snapshots[done]);
  } catch (...) {
    for (int i = 0; i <= done && i < k; ++i) apply(slots_[env_ids[i]], before[i]);
    throw;
  }
}

Config Engine::GetConfig(int64_t env_id) const {
  CheckOpen();
  CheckEnvId(env_id);
  std::lock_guard<std::mutex> lk(config_mu_);
  const Slot& s = slots_[env_id];
  return s.next_config ? *s.next_config : *s.config;
}

void Engine::SetConfig(const int* env_ids, int k, const std::vector<Config>& configs) {
  CheckOpen();
  if (configs.size() != static_cast<size_t>(k)) throw std::invalid_argument("set_config: one config per env id");
  std::vector<std::unique_ptr<Env>> built(k);
  for (int i = 0; i < k; ++i) {
    CheckEnvId(env_ids[i]);
    CheckCommonKeys(config_, configs[i], "set_config");
    // the env takes over the generator of the env it replaces; the env's own seed still reaches randomness that
    // lives outside gen_ (an engine process seeded at construction), as when the engine built it
    built[i] = type_->create(configs[i], env_ids[i], EnvSeed(opts_.seed, env_ids[i]));
    if (built[i]->NumPlayers() != slots_[env_ids[i]].players) {
      throw std::invalid_argument("set_config: env " + std::to_string(env_ids[i]) + " would change its player count");
    }
  }
  std::lock_guard<std::mutex> lk(config_mu_);
  for (int i = 0; i < k; ++i) {
    Slot& s = slots_[env_ids[i]];
    s.next_config = std::make_shared<const Config>(configs[i]);
    s.next_env = std::move(built[i]);  // a later set_config before the reset replaces an earlier one
    s.has_next.store(true, std::memory_order_release);
  }
}

void Engine::Render(const int* env_ids, int k, uint8_t* out) {
  CheckOpen();
  if (spec_.render_shape.size() != 2) {
    throw std::invalid_argument("this env type has no C++ renderer");
  }
  for (int i = 0; i < k; ++i) IdleSlot(env_ids[i]);  // every env is checked before anything is drawn
  const size_t frame = static_cast<size_t>(spec_.render_shape[0]) * spec_.render_shape[1] * 3;
  for (int i = 0; i < k; ++i) slots_[env_ids[i]].env->Render(out + frame * i);
}

}  // namespace pp
