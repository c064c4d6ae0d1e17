// Loading compiled MuJoCo models, shared by the MuJoCo families (mujoco_gym, mujoco_dmc): one compile per model
// file per process, the library version checked against the headers, the compiler's warnings kept quiet.
#pragma once

#include <mujoco/mujoco.h>
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace pp::mujoco {

using ModelPtr = std::shared_ptr<const mjModel>;

// Throws once libmujoco's version differs from the headers this extension was compiled with.
inline void CheckLibraryVersion() {
  static const bool ok = [] {
    if (mj_version() != mjVERSION_HEADER) {
      throw std::runtime_error("libmujoco version " + std::to_string(mj_version()) +
                               " does not match the headers this extension was built with (" +
                               std::to_string(mjVERSION_HEADER) +
                               "); reinstall parallel-pool against the pinned mujoco");
    }
    return true;
  }();
  (void)ok;
}

// Compiler warnings (e.g. gymnasium's half_cheetah.xml uses the deprecated `settotalmass`) are about the asset,
// not actionable by users: keep them out of stdout and out of a MUJOCO_LOG.TXT in the working directory.
inline void IgnoreWarning(const char*) {}

// Load (and compile) a model file once per process; later calls with the same unchanged file (same path, mtime and
// size) share the compiled model, which MuJoCo never writes while simulating. Thread-safe. Throws
// std::invalid_argument with MuJoCo's message; `chosen_by` says which config keys chose the file (for that message,
// e.g. "config key 'xml_file' selects it").
inline ModelPtr LoadModelFile(const std::string& path, const std::string& chosen_by) {
  CheckLibraryVersion();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    throw std::invalid_argument("MuJoCo model file '" + path + "' does not exist (" + chosen_by + ")");
  }
  using Key = std::tuple<std::string, int64_t, int64_t>;
  const Key key{path, static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                static_cast<int64_t>(st.st_size)};
  // Never destroyed: envs may outlive static destruction order at interpreter exit.
  static auto* mu = new std::mutex;
  static auto* cache = new std::map<Key, ModelPtr>;
  std::lock_guard<std::mutex> lk(*mu);  // also serialises the XML compiler
  auto it = cache->find(key);
  if (it != cache->end()) return it->second;
  char err[1024] = {0};
  void (*saved)(const char*) = mju_user_warning;
  mju_user_warning = IgnoreWarning;
  mjModel* m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
  mju_user_warning = saved;
  if (m == nullptr) throw std::invalid_argument("MuJoCo could not load '" + path + "': " + err);
  ModelPtr p(m, [](const mjModel* x) { mj_deleteModel(const_cast<mjModel*>(x)); });
  (*cache)[key] = p;
  return p;
}

}  // namespace pp::mujoco
