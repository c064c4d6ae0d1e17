// MiniGrid-WFC (minigrid.envs.wfc.WFCEnv): a layout drawn by wave function collapse from one of minigrid's pattern
// images (wfc_solver.h), inside a wall border; with ensure_connected only the largest connected open area stays
// open (the rest becomes wall); the agent and the goal on two distinct random open cells, the agent facing a random
// direction. Generation is exact: the same np_random draws in the same order, including the order networkx and
// CPython's sets give the open cells that np_random.permutation picks the start and the goal from.
//
// The pattern images are data minigrid's source tree holds (minigrid/envs/wfc/patterns/*.png), read at run time
// from `pattern_dir` (default: that folder of the installed minigrid package), never copied into this repository.
#pragma once

#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/envs/minigrid/minigrid_env.h"
#include "core/envs/minigrid/wfc_solver.h"

namespace pp::minigrid {

class WFCEnv : public MiniGridEnv {
 public:
  static constexpr const char* kName = "MiniGridWFC";

  // config.py's WFC_PRESETS (the registered ones): every one uses tile_size 1, 8 rotations/reflections, the
  // entropy location and weighted pattern heuristics, no backtracking. (input_periodic does not matter: minigrid
  // wraps the image either way.)
  struct Preset {
    const char* name;
    const char* image;
    int pattern_width;
    bool output_periodic;
  };
  static constexpr Preset kPresets[6] = {
      {"MazeSimple", "SimpleMaze.png", 2, false},   {"DungeonMazeScaled", "ScaledMaze.png", 2, true},
      {"RoomsFabric", "Fabric.png", 3, false},      {"ObstaclesBlackdots", "Blackdots.png", 2, false},
      {"ObstaclesAngular", "Angular.png", 3, true}, {"ObstaclesHogs3", "Hogs.png", 3, true},
  };
  static constexpr int kMaxAttempts = 1000;  // WFCEnv.max_attempts
  static constexpr int kStepsPerCell = 20;   // WFCEnv: max_steps = size * 20 when not given

  static std::vector<ConfigKey> ConfigKeys() {
    std::vector<std::string> names;
    for (const Preset& p : kPresets) names.emplace_back(p.name);
    return MiniGridKeys(
        {{"max_episode_steps",
          int64_t{500},
          "the pool's time limit (not given: the largest max_steps of its envs; given: every env's max_steps)",
          {}},
         {"size", int64_t{25}, "side of the square grid, walls included (the pattern fills size - 2)", {}},
         {"max_steps",
          int64_t{0},
          "minigrid's max_steps, the env's own episode limit (truncation, success reward): 0 = size * 20 "
          "(minigrid's rule), so it follows size, at make and through set_config; at most max_episode_steps",
          {}},
         {"wfc_preset", std::string("MazeSimple"), "minigrid's WFC preset (pattern image and solver options)", names},
         {"ensure_connected", true, "keep only the largest connected open area open (the rest becomes wall)", {}},
         {"pattern_dir",
          std::string("{pkgdir:minigrid}/envs/wfc/patterns"),
          "folder holding minigrid's WFC pattern images (default: the installed minigrid package's)",
          {}}});
  }

  // The spec does not depend on the image: make_spec works without it, make reads it (constructing the envs).
  static void DefineSpec(const Config& c, SpecBuilder& b) {
    IntInRange(c, "size", 3, 255);
    IntInRange(c, "max_steps", 0, 1 << 30);
    FindPreset(c.Get<std::string>("wfc_preset"));
    MiniGridSpec(c, b);
  }

  WFCEnv(const Config& c, int env_id, uint64_t seed)
      : MiniGridEnv(c, env_id, seed, c.Get<int>("size"), c.Get<int>("size"), /*see_through_walls=*/false),
        model_(LoadPresetModel(c)),
        inner_(c.Get<int>("size") - 2),
        ensure_connected_(c.Get<bool>("ensure_connected")),
        solver_(model_, inner_, inner_, FindPreset(c.Get<std::string>("wfc_preset")).output_periodic) {
    // checked here, where an env's own values meet the pool's (make, set_config), not in the spec, which per-env
    // values are checked against with the pool's first values
    const int limit = MaxSteps(c), pool_limit = c.Get<int>("max_episode_steps");
    if (limit > pool_limit) {  // the pool would cut the env's episodes short of minigrid's
      throw std::invalid_argument("MiniGrid-WFC: size " + std::to_string(c.Get<int>("size")) + " gives max_steps " +
                                  std::to_string(limit) + " (max_steps, or size * 20 when it is 0), above the pool's " +
                                  "max_episode_steps " + std::to_string(pool_limit) +
                                  ": make the pool with a larger max_episode_steps, or give max_steps");
    }
    max_steps_ = limit;
    const size_t cells = static_cast<size_t>(inner_) * inner_;
    pattern_.reserve(cells);
    open_.resize(cells);
    component_.resize(cells);
    order_.reserve(cells);
    bfs_.reserve(cells);
    scratch_.reserve(cells);
    perm_.reserve(cells);
    cell_hash_.resize(cells);
    for (size_t cell = 0; cell < cells; ++cell) {
      cell_hash_[cell] = TupleHash(static_cast<uint64_t>(cell / inner_), static_cast<uint64_t>(cell % inner_));
    }
  }

 protected:
  void GenGrid() override {
    const wfc::Model& model = *model_;
    if (!solver_.Run(rng_, kMaxAttempts, pattern_)) {
      throw std::runtime_error("MiniGrid WFC: could not generate a valid pattern within " +
                               std::to_string(kMaxAttempts) + " attempts");
    }
    // Cells are (a, b): a the pattern's row, which minigrid's Grid.decode makes the column x = a + 1.
    for (size_t cell = 0; cell < open_.size(); ++cell) open_[cell] = model.wall[pattern_[cell]] ? 0 : 1;
    OpenCellsInGraphOrder();
    // _place_start_and_goal_random: np_random.permutation(len(nodes))[:2]
    perm_.resize(order_.size());
    for (size_t i = 0; i < perm_.size(); ++i) perm_[i] = static_cast<int64_t>(i);
    rng_.Shuffle(perm_.data(), static_cast<int64_t>(perm_.size()));
    const int start = order_[static_cast<size_t>(perm_[0])], goal = order_[static_cast<size_t>(perm_[1])];
    // Every cell not kept open is a wall (the border included).
    for (int y = 0; y < height_; ++y) {
      for (int x = 0; x < width_; ++x) grid_.Set(x, y, Wall());
    }
    for (int cell : order_) grid_.Set(cell / inner_ + 1, cell % inner_ + 1, Obj{});
    grid_.Set(goal / inner_ + 1, goal % inner_ + 1, Goal());
    agent_dir_ = RandInt(0, 4);
    agent_x_ = start / inner_ + 1;
    agent_y_ = start % inner_ + 1;
    mission_ = "traverse the maze to get to the goal";
  }

 private:
  // minigrid's WFCEnv: max_steps, or size * 20 when not given (parallel_pool.registry derives the pool's default
  // max_episode_steps by the same rule)
  static int MaxSteps(const Config& c) {
    const int given = c.Get<int>("max_steps");
    return given > 0 ? given : c.Get<int>("size") * kStepsPerCell;
  }
  static const Preset& FindPreset(const std::string& name) {
    for (const Preset& p : kPresets) {
      if (name == p.name) return p;
    }
    throw std::invalid_argument("config key 'wfc_preset': unknown preset '" + name + "'");
  }

  static std::shared_ptr<const wfc::Model> LoadPresetModel(const Config& c) {
    const Preset& preset = FindPreset(c.Get<std::string>("wfc_preset"));
    const std::string dir = c.Get<std::string>("pattern_dir");
    if (dir.rfind("{pkgdir:", 0) == 0) {
      throw std::invalid_argument(
          "MiniGrid-WFC reads minigrid's pattern images, and the minigrid package is not installed: pass "
          "pattern_dir=<a folder holding " +
          std::string(preset.image) + "> (minigrid's source tree: minigrid/envs/wfc/patterns)");
    }
    const std::string path = dir + "/" + preset.image;
    try {
      return wfc::LoadModel(path, preset.pattern_width);
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string(e.what()) +
                                  "; config key 'pattern_dir' names the folder of minigrid's WFC pattern images "
                                  "(minigrid's wheels up to 3.2.0 do not ship them: use the minigrid/envs/wfc/"
                                  "patterns folder of a source checkout of github.com/Farama-Foundation/Minigrid)");
    }
  }

  // CPython's hash of the tuple (a, b) of small non-negative ints (tuplehash, 64-bit xxHash lanes; hash(int) is
  // the int), which orders the sets networkx builds of the graph's nodes.
  static uint64_t TupleHash(uint64_t a, uint64_t b) {
    constexpr uint64_t kPrime1 = 11400714785074694791ULL, kPrime2 = 14029467366897019727ULL,
                       kPrime5 = 2870177450012600261ULL;
    uint64_t acc = kPrime5;
    for (uint64_t lane : {a, b}) {
      acc += lane * kPrime2;
      acc = (acc << 31) | (acc >> 33);
      acc *= kPrime1;
    }
    acc += 2 ^ (kPrime5 ^ 3527539ULL);
    return acc == ~uint64_t{0} ? 1546275796ULL : acc;
  }

  // Iteration order of a CPython 3.11 set of cells added one by one in `keys`' order (set_add_entry: slot
  // hash & mask, then up to 9 linear probes, then perturbed probing; the table grows to the power of two above
  // 4 x used when 3/5 full, re-inserting in slot order).
  void SetIterationOrder(const std::vector<int>& keys, std::vector<int>& out) {
    size_t mask = 7;
    table_.assign(8, -1);
    size_t used = 0;
    auto insert = [this](std::vector<int>& table, size_t m, int key) {
      const uint64_t h = cell_hash_[static_cast<size_t>(key)];
      uint64_t perturb = h;
      size_t i = h & m;
      while (true) {
        if (table[i] < 0) {
          table[i] = key;
          return;
        }
        if (i + 9 <= m) {
          for (size_t j = 1; j <= 9; ++j) {
            if (table[i + j] < 0) {
              table[i + j] = key;
              return;
            }
          }
        }
        perturb >>= 5;
        i = (i * 5 + 1 + perturb) & m;
      }
    };
    for (int key : keys) {
      insert(table_, mask, key);
      ++used;
      if (used * 5 < mask * 3) continue;
      const size_t min_used = used > 50000 ? used * 2 : used * 4;
      size_t size = 8;
      while (size <= min_used) size <<= 1;
      resized_.assign(size, -1);
      for (int k : table_) {
        if (k >= 0) insert(resized_, size - 1, k);
      }
      table_.swap(resized_);
      mask = size - 1;
    }
    out.clear();
    for (int k : table_) {
      if (k >= 0) out.push_back(k);
    }
  }

  // The open cells in the order minigrid lists the graph's navigable nodes (order_). The grid graph's nodes are
  // row-major and each node's neighbours come up, left, down, right. With ensure_connected (_get_largest_component)
  // the nodes are those of the largest component (the first found in row-major order on ties; minigrid fails when
  // no component has two cells); networkx's subgraph views list them in graph order, unless the component has fewer
  // than half the open cells: then in the order of a set built from another set built from the breadth-first
  // search's set (nx.connected_components, subgraph(c).copy(), subgraph(component)).
  void OpenCellsInGraphOrder() {
    order_.clear();
    const int cells = static_cast<int>(open_.size());
    int num_open = 0;
    for (int cell = 0; cell < cells; ++cell) {
      if (open_[cell]) {
        order_.push_back(cell);
        ++num_open;
      }
    }
    if (!ensure_connected_) {
      if (num_open < 2) throw std::runtime_error("MiniGrid WFC: the layout has fewer than two open cells");
      return;
    }
    std::fill(component_.begin(), component_.end(), -1);
    int best_id = -1;
    size_t best_size = 1;
    for (int source : order_) {
      if (component_[source] >= 0) continue;
      scratch_.clear();
      scratch_.push_back(source);
      component_[source] = source;
      for (size_t at = 0; at < scratch_.size(); ++at) {  // BFS; a FIFO queue visits levels in _plain_bfs's order
        const int a = scratch_[at] / inner_, b = scratch_[at] % inner_;
        const int na[4] = {a - 1, a, a + 1, a}, nb[4] = {b, b - 1, b, b + 1};
        for (int i = 0; i < 4; ++i) {
          if (na[i] < 0 || na[i] >= inner_ || nb[i] < 0 || nb[i] >= inner_) continue;
          const int next = na[i] * inner_ + nb[i];
          if (!open_[next] || component_[next] >= 0) continue;
          component_[next] = source;
          scratch_.push_back(next);
        }
      }
      if (scratch_.size() > best_size) {
        best_size = scratch_.size();
        best_id = source;
        bfs_ = scratch_;
      }
    }
    if (best_id < 0) throw std::runtime_error("MiniGrid WFC: no two open cells of the layout are connected");
    if (2 * bfs_.size() >= static_cast<size_t>(num_open)) {
      size_t kept = 0;
      for (int cell : order_) {
        if (component_[cell] == best_id) order_[kept++] = cell;
      }
      order_.resize(kept);
      return;
    }
    SetIterationOrder(bfs_, scratch_);    // c
    SetIterationOrder(scratch_, order_);  // subgraph(c): built from c, and its copy lists it in that order
    scratch_ = order_;
    SetIterationOrder(scratch_, order_);  // subgraph(component): built from the copy's order
  }

  std::shared_ptr<const wfc::Model> model_;
  int inner_;
  bool ensure_connected_;
  wfc::Solver solver_;
  std::vector<int> pattern_;
  std::vector<uint8_t> open_;
  std::vector<int> component_, order_, bfs_, scratch_, table_, resized_;
  std::vector<int64_t> perm_;
  std::vector<uint64_t> cell_hash_;
};

}  // namespace pp::minigrid
