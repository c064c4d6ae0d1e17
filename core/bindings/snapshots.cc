// PyEngine's calls on single envs outside stepping: engine state (get/set), snapshots and their restore, per-env
// configs, and C++ rendering. Each takes the API lock like a step; none runs per step.
#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/bindings/py_engine.h"

namespace pp::bindings {

std::vector<double> PyEngine::GetState(int64_t env_id) {
  Lock lk(this);
  return engine_->GetState(env_id);
}

void PyEngine::SetState(int64_t env_id, const std::vector<double>& state) {
  Lock lk(this);
  engine_->SetState(env_id, state);
}

py::tuple PyEngine::Snapshot(const py::object& env_ids) {
  py::array_t<int32_t> ids = ConvertEnvIds(env_ids, num_envs());
  const int k = static_cast<int>(ids.size());
  std::vector<Engine::EnvSnapshot> snaps;
  {
    Lock lk(this);
    snaps = engine_->Snapshot(ids.data(), k);
  }
  py::list env;
  const py::ssize_t words = static_cast<py::ssize_t>(Generator::state_size + 1);
  py::array_t<uint32_t> gen({static_cast<py::ssize_t>(k), words});
  py::array_t<int32_t> elapsed(k);
  py::array_t<bool> done(k);
  for (int i = 0; i < k; ++i) {
    env.append(py::array_t<double>(static_cast<py::ssize_t>(snaps[i].env.size()), snaps[i].env.data()));
    if (static_cast<py::ssize_t>(snaps[i].generator.size()) != words) throw std::runtime_error("generator state");
    std::copy(snaps[i].generator.begin(), snaps[i].generator.end(), gen.mutable_data(i, 0));
    elapsed.mutable_at(i) = static_cast<int32_t>(snaps[i].elapsed);
    done.mutable_at(i) = snaps[i].done;
  }
  return py::make_tuple(env, gen, elapsed, done);
}

void PyEngine::Restore(const py::object& env_ids, const py::list& env, const Dense<uint32_t>& gen,
                       const Dense<int64_t>& elapsed, const Dense<bool>& done) {
  py::array_t<int32_t> ids = ConvertEnvIds(env_ids, num_envs());
  const int k = static_cast<int>(ids.size());
  const py::ssize_t words = static_cast<py::ssize_t>(Generator::state_size + 1);
  if (static_cast<int>(env.size()) != k || gen.ndim() != 2 || gen.shape(0) != k || gen.shape(1) != words ||
      elapsed.size() != k || done.size() != k) {
    throw py::value_error("restore: the snapshot arrays do not hold " + std::to_string(k) + " envs");
  }
  std::vector<Engine::EnvSnapshot> snaps(k);
  for (int i = 0; i < k; ++i) {
    snaps[i].env = env[i].cast<std::vector<double>>();
    snaps[i].generator.assign(gen.data(i, 0), gen.data(i, 0) + words);
    snaps[i].elapsed = elapsed.at(i);
    snaps[i].done = done.at(i);
  }
  Lock lk(this);
  engine_->Restore(ids.data(), k, snaps);
}

py::dict PyEngine::GetConfig(int64_t env_id) {
  Lock lk(this);
  return ConfigToDict(engine_->GetConfig(env_id));
}

void PyEngine::SetConfig(const py::object& env_ids, const py::dict& values) {
  py::array_t<int32_t> ids = ConvertEnvIds(env_ids, num_envs());
  const int k = static_cast<int>(ids.size());
  Lock lk(this);
  std::vector<Config> configs;
  for (int i = 0; i < k; ++i) {
    Config c = engine_->GetConfig(ids.data()[i]);
    for (auto item : values) {
      const std::string key = item.first.cast<std::string>();
      auto it = c.mutable_values().find(key);
      if (it == c.mutable_values().end()) throw py::value_error("unknown config key '" + key + "'");
      py::handle v = item.second;
      if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
        py::list per(py::reinterpret_borrow<py::object>(v));
        if (static_cast<int>(per.size()) != k) {
          throw py::value_error("config key '" + key + "' has " + std::to_string(per.size()) + " values for " +
                                std::to_string(k) + " env ids");
        }
        v = per[i];
      }
      it->second = PyToConfigValue(key, it->second, v);
    }
    configs.push_back(std::move(c));
  }
  WithoutGil([&](PyThreadState*&) { engine_->SetConfig(ids.data(), k, configs); });
}

py::array PyEngine::Render(const py::object& env_ids) {
  py::array_t<int32_t> ids = ConvertEnvIds(env_ids, num_envs());
  const auto& shape = engine_->spec().render_shape;
  if (shape.size() != 2) throw py::value_error("render: this env class has no C++ renderer");
  py::array_t<uint8_t> out(
      {ids.size(), static_cast<py::ssize_t>(shape[0]), static_cast<py::ssize_t>(shape[1]), py::ssize_t{3}});
  Lock lk(this);
  engine_->Render(ids.data(), static_cast<int>(ids.size()), out.mutable_data());
  return out;
}

}  // namespace pp::bindings
