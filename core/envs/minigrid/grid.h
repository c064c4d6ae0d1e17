// The MiniGrid world (minigrid 3.2.0's core/world_object.py and core/grid.py): objects as small values, the grid,
// and the rules each object kind follows (overlap, pickup, see-behind, toggle, encoding).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace pp::minigrid {

// minigrid's OBJECT_TO_IDX; kNone is "no object" (minigrid's None), encoded as kEmpty where visible.
enum ObjType : uint8_t {
  kNone = 0,  // OBJECT_TO_IDX["unseen"] too: an invisible cell encodes as (0, 0, 0)
  kEmpty = 1,
  kWall = 2,
  kFloor = 3,
  kDoor = 4,
  kKey = 5,
  kBall = 6,
  kBox = 7,
  kGoal = 8,
  kLava = 9,
  kAgent = 10,
};

// minigrid's COLOR_TO_IDX.
enum Color : uint8_t { kRed = 0, kGreen = 1, kBlue = 2, kPurple = 3, kYellow = 4, kGrey = 5 };
// minigrid's COLOR_NAMES (sorted by name): the list _rand_color and _rand_elem(COLOR_NAMES) draw from.
inline constexpr uint8_t kColorNames[6] = {kBlue, kGreen, kGrey, kPurple, kRed, kYellow};
inline const char* ColorName(uint8_t c) {
  static constexpr const char* kNames[6] = {"red", "green", "blue", "purple", "yellow", "grey"};
  return kNames[c];
}
inline const char* TypeName(uint8_t t) {
  static constexpr const char* kNames[11] = {"unseen", "empty", "wall", "floor", "door", "key",
                                             "ball",   "box",   "goal", "lava",  "agent"};
  return kNames[t];
}

// Door states, minigrid's STATE_TO_IDX.
enum DoorState : uint8_t { kOpen = 0, kClosed = 1, kLocked = 2 };

// One object by value. A box keeps its contents inline (minigrid boxes hold one object that is never a full box).
struct Obj {
  uint8_t type = kNone, color = 0, state = 0;
  uint8_t in_type = kNone, in_color = 0, in_state = 0;  // a box's contents
  // Identity where minigrid compares objects with `is` (BabyAI's verifier): 0 for untracked objects.
  uint8_t uid = 0;

  static Obj Make(uint8_t type, uint8_t color, uint8_t state = 0) { return Obj{type, color, state, kNone, 0, 0, 0}; }
  bool none() const { return type == kNone; }
  bool operator==(const Obj& o) const {
    return type == o.type && color == o.color && state == o.state && in_type == o.in_type && in_color == o.in_color &&
           in_state == o.in_state && uid == o.uid;
  }
  // WorldObj.can_overlap: open doors, goals, floors and lava (the agent walks into lava and dies there).
  bool CanOverlap() const {
    return (type == kDoor && state == kOpen) || type == kGoal || type == kFloor || type == kLava;
  }
  bool CanPickup() const { return type == kKey || type == kBall || type == kBox; }
  // Walls and closed or locked doors block the view; nothing else does.
  bool SeeBehind() const { return type != kWall && !(type == kDoor && state != kOpen); }
  Obj Contents() const { return Make(in_type, in_color, in_state); }
};

inline Obj Wall(uint8_t color = kGrey) { return Obj::Make(kWall, color); }
inline Obj Goal() { return Obj::Make(kGoal, kGreen); }
inline Obj Lava() { return Obj::Make(kLava, kRed); }
inline Obj Floor(uint8_t color = kBlue) { return Obj::Make(kFloor, color); }
inline Obj Key(uint8_t color = kBlue) { return Obj::Make(kKey, color); }
inline Obj Ball(uint8_t color = kBlue) { return Obj::Make(kBall, color); }
inline Obj Door(uint8_t color, bool is_open = false, bool is_locked = false) {
  return Obj::Make(kDoor, color, is_open ? kOpen : (is_locked ? kLocked : kClosed));
}
inline Obj Box(uint8_t color, Obj contents = Obj{}) {
  Obj b = Obj::Make(kBox, color);
  b.in_type = contents.type;
  b.in_color = contents.color;
  b.in_state = contents.state;
  return b;
}

// Grid (minigrid's Grid): cells indexed (x, y), x the column.
class Grid {
 public:
  void Resize(int width, int height) {
    width_ = width;
    height_ = height;
    cells_.assign(static_cast<size_t>(width) * height, Obj{});
  }
  void Clear() { std::fill(cells_.begin(), cells_.end(), Obj{}); }
  int width() const { return width_; }
  int height() const { return height_; }
  bool InBounds(int x, int y) const { return x >= 0 && x < width_ && y >= 0 && y < height_; }
  const Obj& Get(int x, int y) const { return cells_[static_cast<size_t>(y) * width_ + x]; }
  Obj& At(int x, int y) { return cells_[static_cast<size_t>(y) * width_ + x]; }
  void Set(int x, int y, Obj o) { At(x, y) = o; }

  // horz_wall / vert_wall / wall_rect; a length of -1 runs to the grid's edge.
  void HorzWall(int x, int y, int length = -1, Obj o = Wall()) {
    if (length < 0) length = width_ - x;
    for (int i = 0; i < length; ++i) Set(x + i, y, o);
  }
  void VertWall(int x, int y, int length = -1, Obj o = Wall()) {
    if (length < 0) length = height_ - y;
    for (int j = 0; j < length; ++j) Set(x, y + j, o);
  }
  void WallRect(int x, int y, int w, int h) {
    HorzWall(x, y, w);
    HorzWall(x, y + h - 1, w);
    VertWall(x, y, h);
    VertWall(x + w - 1, y, h);
  }

 private:
  int width_ = 0, height_ = 0;
  std::vector<Obj> cells_;
};

}  // namespace pp::minigrid
