// The env registry: env types (a class + its config keys + its spec) and task ids (a type + config overrides).
// An env header defines a class with:
//   static constexpr const char* kName;                   // the env type's name, e.g. "CartPole"
//   static std::vector<pp::ConfigKey> ConfigKeys();       // its own keys (may re-default a common key)
//   static void DefineSpec(const pp::Config&, pp::SpecBuilder&);
//   Class(const pp::Config&, int env_id, uint64_t seed);  // derived from pp::Env
//   static void StepBatch(pp::Env* const*, int, const pp::BatchRows&) noexcept;  // optional (see pp::Env)
//   static constexpr bool kStepWaitsOnAnotherProcess = true;  // optional: its step mostly waits (see EnvClass)
// and one registration line in its family's register.cc:
//   PP_REGISTER_ENV(CartPoleEnv, {"CartPole-v0", {{"max_episode_steps", 200}}}, {"CartPole-v1", {}});
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/env.h"
#include "core/engine/spec.h"

namespace pp {

struct EnvClass {
  std::string name;
  std::vector<ConfigKey> keys;  // common keys (possibly re-defaulted) + the env's own
  std::function<Spec(const Config&)> make_spec;
  std::function<std::unique_ptr<Env>(const Config&, int env_id, uint64_t seed)> create;
  // the class's StepBatch (see Env), or nullptr: the engine steps its envs one at a time
  void (*step_batch)(Env* const* envs, int n, const BatchRows& rows) = nullptr;
  // the class's step mostly waits for another process (ViZDoom's engine), leaving its thread's core idle: the
  // automatic thread count then gives it a worker per core (ParseOptions)
  bool step_waits_on_another_process = false;
};

struct TaskDef {
  std::string id;
  std::map<std::string, ConfigValue> overrides;
};

class Registry {
 public:
  static Registry& Get() {
    static Registry r;
    return r;
  }
  void AddType(EnvClass t) { types_[t.name] = std::move(t); }
  void AddTask(const std::string& type, TaskDef task) { tasks_[task.id] = {type, std::move(task.overrides)}; }
  const std::map<std::string, EnvClass>& types() const { return types_; }
  // task id -> (type name, config overrides)
  const std::map<std::string, std::pair<std::string, std::map<std::string, ConfigValue>>>& tasks() const {
    return tasks_;
  }

 private:
  std::map<std::string, EnvClass> types_;
  std::map<std::string, std::pair<std::string, std::map<std::string, ConfigValue>>> tasks_;
};

template <typename E>
bool RegisterEnv(const std::vector<TaskDef>& tasks) {
  EnvClass t;
  t.name = E::kName;
  t.keys = CommonConfigKeys();
  for (auto& k : E::ConfigKeys()) {
    bool replaced = false;
    for (auto& existing : t.keys) {
      if (existing.name == k.name) {
        const bool unbounded = existing.unbounded;  // a re-default keeps the common key's meaning
        existing = k;
        existing.unbounded = existing.unbounded || unbounded;
        replaced = true;
      }
    }
    if (!replaced) t.keys.push_back(k);
  }
  t.make_spec = [](const Config& c) {
    Spec s;
    SpecBuilder b(&s);
    E::DefineSpec(c, b);
    return s;
  };
  t.create = [keys = t.keys](const Config& c, int env_id, uint64_t seed) -> std::unique_ptr<Env> {
    CheckFloatKeys(keys, c);
    return std::make_unique<E>(c, env_id, seed);
  };
  if constexpr (requires { E::kStepWaitsOnAnotherProcess; }) {
    t.step_waits_on_another_process = E::kStepWaitsOnAnotherProcess;
  }
  if constexpr (requires { &E::StepBatch; }) {
    static_assert(noexcept(E::StepBatch(nullptr, 0, std::declval<const BatchRows&>())), "StepBatch must be noexcept");
    t.step_batch = &E::StepBatch;
  }
  Registry::Get().AddType(std::move(t));
  for (const auto& task : tasks) Registry::Get().AddTask(E::kName, task);
  return true;
}

template <typename E>
bool RegisterEnv(std::initializer_list<TaskDef> tasks) {
  return RegisterEnv<E>(std::vector<TaskDef>(tasks));
}

}  // namespace pp

#define PP_CONCAT_INNER(a, b) a##b
#define PP_CONCAT(a, b) PP_CONCAT_INNER(a, b)
#define PP_REGISTER_ENV(EnvClass, ...) \
  static const bool PP_CONCAT(pp_registered_, __LINE__) = ::pp::RegisterEnv<EnvClass>({__VA_ARGS__})
