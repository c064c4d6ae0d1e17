// MiniGrid family (minigrid 3.2.0's envs, EnvPool 1.2.5's ids and observation layout): one registration line per
// env type; max_episode_steps is minigrid's max_steps of each id.
#include "core/envs/minigrid/babyai_goto.h"
#include "core/envs/minigrid/babyai_level_gen.h"
#include "core/envs/minigrid/babyai_open.h"
#include "core/envs/minigrid/babyai_other.h"
#include "core/envs/minigrid/babyai_pickup.h"
#include "core/envs/minigrid/babyai_put_next.h"
#include "core/envs/minigrid/babyai_unlock.h"
#include "core/envs/minigrid/crossing.h"
#include "core/envs/minigrid/dist_shift.h"
#include "core/envs/minigrid/door_key.h"
#include "core/envs/minigrid/dynamic_obstacles.h"
#include "core/envs/minigrid/empty.h"
#include "core/envs/minigrid/fetch.h"
#include "core/envs/minigrid/four_rooms.h"
#include "core/envs/minigrid/go_to_door.h"
#include "core/envs/minigrid/go_to_object.h"
#include "core/envs/minigrid/key_corridor.h"
#include "core/envs/minigrid/lava_gap.h"
#include "core/envs/minigrid/locked_room.h"
#include "core/envs/minigrid/memory.h"
#include "core/envs/minigrid/multi_room.h"
#include "core/envs/minigrid/obstructed_maze.h"
#include "core/envs/minigrid/playground.h"
#include "core/envs/minigrid/put_near.h"
#include "core/envs/minigrid/red_blue_doors.h"
#include "core/envs/minigrid/unlock.h"
#include "core/envs/minigrid/unlock_pickup.h"
#include "core/envs/minigrid/wfc.h"

namespace pp::minigrid {

namespace {
using O = std::map<std::string, ConfigValue>;
O Sized(int size, int max_steps) { return {{"size", int64_t{size}}, {"max_episode_steps", int64_t{max_steps}}}; }
O Random(O o) {
  o["agent_start_x"] = int64_t{-1};
  return o;
}
O With(O o, const std::string& key, ConfigValue v) {
  o[key] = std::move(v);
  return o;
}
}  // namespace

PP_REGISTER_ENV(EmptyEnv, {"MiniGrid-Empty-5x5-v0", Sized(5, 100)}, {"MiniGrid-Empty-6x6-v0", Sized(6, 144)},
                {"MiniGrid-Empty-8x8-v0", Sized(8, 256)}, {"MiniGrid-Empty-16x16-v0", Sized(16, 1024)},
                {"MiniGrid-Empty-Random-5x5-v0", Random(Sized(5, 100))},
                {"MiniGrid-Empty-Random-6x6-v0", Random(Sized(6, 144))});
PP_REGISTER_ENV(DoorKeyEnv, {"MiniGrid-DoorKey-5x5-v0", Sized(5, 250)}, {"MiniGrid-DoorKey-6x6-v0", Sized(6, 360)},
                {"MiniGrid-DoorKey-8x8-v0", Sized(8, 640)}, {"MiniGrid-DoorKey-16x16-v0", Sized(16, 2560)});
PP_REGISTER_ENV(FourRoomsEnv, {"MiniGrid-FourRooms-v0", {}});
PP_REGISTER_ENV(LavaGapEnv, {"MiniGrid-LavaGapS5-v0", Sized(5, 100)}, {"MiniGrid-LavaGapS6-v0", Sized(6, 144)},
                {"MiniGrid-LavaGapS7-v0", Sized(7, 196)});
PP_REGISTER_ENV(DistShiftEnv, {"MiniGrid-DistShift1-v0", {{"strip2_row", int64_t{2}}}},
                {"MiniGrid-DistShift2-v0", {{"strip2_row", int64_t{5}}}});
PP_REGISTER_ENV(CrossingEnv, {"MiniGrid-LavaCrossingS9N1-v0", With(Sized(9, 324), "num_crossings", int64_t{1})},
                {"MiniGrid-LavaCrossingS9N2-v0", With(Sized(9, 324), "num_crossings", int64_t{2})},
                {"MiniGrid-LavaCrossingS9N3-v0", With(Sized(9, 324), "num_crossings", int64_t{3})},
                {"MiniGrid-LavaCrossingS11N5-v0", With(Sized(11, 484), "num_crossings", int64_t{5})},
                {"MiniGrid-SimpleCrossingS9N1-v0",
                 With(With(Sized(9, 324), "num_crossings", int64_t{1}), "obstacle_type", std::string("wall"))},
                {"MiniGrid-SimpleCrossingS9N2-v0",
                 With(With(Sized(9, 324), "num_crossings", int64_t{2}), "obstacle_type", std::string("wall"))},
                {"MiniGrid-SimpleCrossingS9N3-v0",
                 With(With(Sized(9, 324), "num_crossings", int64_t{3}), "obstacle_type", std::string("wall"))},
                {"MiniGrid-SimpleCrossingS11N5-v0",
                 With(With(Sized(11, 484), "num_crossings", int64_t{5}), "obstacle_type", std::string("wall"))});
PP_REGISTER_ENV(DynamicObstaclesEnv,
                {"MiniGrid-Dynamic-Obstacles-5x5-v0", With(Sized(5, 100), "n_obstacles", int64_t{2})},
                {"MiniGrid-Dynamic-Obstacles-Random-5x5-v0", Random(With(Sized(5, 100), "n_obstacles", int64_t{2}))},
                {"MiniGrid-Dynamic-Obstacles-6x6-v0", With(Sized(6, 144), "n_obstacles", int64_t{3})},
                {"MiniGrid-Dynamic-Obstacles-Random-6x6-v0", Random(With(Sized(6, 144), "n_obstacles", int64_t{3}))},
                {"MiniGrid-Dynamic-Obstacles-8x8-v0", With(Sized(8, 256), "n_obstacles", int64_t{4})},
                {"MiniGrid-Dynamic-Obstacles-16x16-v0", With(Sized(16, 1024), "n_obstacles", int64_t{8})});
PP_REGISTER_ENV(MultiRoomEnv,
                {"MiniGrid-MultiRoom-N2-S4-v0",
                 {{"min_num_rooms", int64_t{2}},
                  {"max_num_rooms", int64_t{2}},
                  {"max_room_size", int64_t{4}},
                  {"max_episode_steps", int64_t{40}}}},
                {"MiniGrid-MultiRoom-N4-S5-v0",
                 {{"min_num_rooms", int64_t{6}},
                  {"max_num_rooms", int64_t{6}},
                  {"max_room_size", int64_t{5}},
                  {"max_episode_steps", int64_t{120}}}},
                {"MiniGrid-MultiRoom-N6-v0",
                 {{"min_num_rooms", int64_t{6}}, {"max_num_rooms", int64_t{6}}, {"max_episode_steps", int64_t{120}}}});

PP_REGISTER_ENV(FetchEnv, {"MiniGrid-Fetch-5x5-N2-v0", With(Sized(5, 125), "num_objs", int64_t{2})},
                {"MiniGrid-Fetch-6x6-N2-v0", With(Sized(6, 180), "num_objs", int64_t{2})},
                {"MiniGrid-Fetch-8x8-N3-v0", With(Sized(8, 320), "num_objs", int64_t{3})});
PP_REGISTER_ENV(GoToDoorEnv, {"MiniGrid-GoToDoor-5x5-v0", Sized(5, 100)}, {"MiniGrid-GoToDoor-6x6-v0", Sized(6, 144)},
                {"MiniGrid-GoToDoor-8x8-v0", Sized(8, 256)});
PP_REGISTER_ENV(GoToObjectEnv, {"MiniGrid-GoToObject-6x6-N2-v0", With(Sized(6, 180), "num_objs", int64_t{2})},
                {"MiniGrid-GoToObject-8x8-N2-v0", With(Sized(8, 320), "num_objs", int64_t{2})});
PP_REGISTER_ENV(PutNearEnv, {"MiniGrid-PutNear-6x6-N2-v0", With(Sized(6, 30), "num_objs", int64_t{2})},
                {"MiniGrid-PutNear-8x8-N3-v0", With(Sized(8, 40), "num_objs", int64_t{3})});
PP_REGISTER_ENV(UnlockEnv, {"MiniGrid-Unlock-v0", {}});
PP_REGISTER_ENV(UnlockPickupEnv, {"MiniGrid-UnlockPickup-v0", {}});
PP_REGISTER_ENV(BlockedUnlockPickupEnv, {"MiniGrid-BlockedUnlockPickup-v0", {}});
namespace {
O Corridor(int room_size, int num_rows) {
  return {{"room_size", int64_t{room_size}},
          {"num_rows", int64_t{num_rows}},
          {"max_episode_steps", int64_t{30 * room_size * room_size}}};
}
}  // namespace
PP_REGISTER_ENV(KeyCorridorEnv, {"MiniGrid-KeyCorridorS3R1-v0", Corridor(3, 1)},
                {"MiniGrid-KeyCorridorS3R2-v0", Corridor(3, 2)}, {"MiniGrid-KeyCorridorS3R3-v0", Corridor(3, 3)},
                {"MiniGrid-KeyCorridorS4R3-v0", Corridor(4, 3)}, {"MiniGrid-KeyCorridorS5R3-v0", Corridor(5, 3)},
                {"MiniGrid-KeyCorridorS6R3-v0", Corridor(6, 3)});
PP_REGISTER_ENV(LockedRoomEnv, {"MiniGrid-LockedRoom-v0", Sized(19, 190)});
PP_REGISTER_ENV(RedBlueDoorsEnv, {"MiniGrid-RedBlueDoors-6x6-v0", Sized(6, 720)},
                {"MiniGrid-RedBlueDoors-8x8-v0", Sized(8, 1280)});
PP_REGISTER_ENV(MemoryEnv, {"MiniGrid-MemoryS17Random-v0", With(Sized(17, 1445), "random_length", true)},
                {"MiniGrid-MemoryS13Random-v0", With(Sized(13, 845), "random_length", true)},
                {"MiniGrid-MemoryS13-v0", Sized(13, 845)}, {"MiniGrid-MemoryS11-v0", Sized(11, 605)},
                {"MiniGrid-MemoryS9-v0", Sized(9, 405)}, {"MiniGrid-MemoryS7-v0", Sized(7, 245)});
PP_REGISTER_ENV(PlaygroundEnv, {"MiniGrid-Playground-v0", {}});
PP_REGISTER_ENV(WFCEnv, {"MiniGrid-WFC-MazeSimple-v0", {{"wfc_preset", std::string("MazeSimple")}}},
                {"MiniGrid-WFC-DungeonMazeScaled-v0", {{"wfc_preset", std::string("DungeonMazeScaled")}}},
                {"MiniGrid-WFC-RoomsFabric-v0", {{"wfc_preset", std::string("RoomsFabric")}}},
                {"MiniGrid-WFC-ObstaclesBlackdots-v0", {{"wfc_preset", std::string("ObstaclesBlackdots")}}},
                {"MiniGrid-WFC-ObstaclesAngular-v0", {{"wfc_preset", std::string("ObstaclesAngular")}}},
                {"MiniGrid-WFC-ObstaclesHogs3-v0", {{"wfc_preset", std::string("ObstaclesHogs3")}}});
namespace {
O Maze(bool key_in_box, bool blocked, int rooms_visited) {
  return {{"key_in_box", key_in_box}, {"blocked", blocked}, {"max_episode_steps", int64_t{4 * rooms_visited * 36}}};
}
O Quarters(O o, int quarters, int agent_room_i) {
  o["num_quarters"] = int64_t{quarters};
  o["agent_room_i"] = int64_t{agent_room_i};
  return o;
}
}  // namespace
PP_REGISTER_ENV(ObstructedMaze1DEnv, {"MiniGrid-ObstructedMaze-1Dl-v0", Maze(false, false, 2)},
                {"MiniGrid-ObstructedMaze-1Dlh-v0", Maze(true, false, 2)},
                {"MiniGrid-ObstructedMaze-1Dlhb-v0", Maze(true, true, 2)});
PP_REGISTER_ENV(ObstructedMazeFullEnv, {"MiniGrid-ObstructedMaze-2Dl-v0", Quarters(Maze(false, false, 4), 1, 2)},
                {"MiniGrid-ObstructedMaze-2Dlh-v0", Quarters(Maze(true, false, 4), 1, 2)},
                {"MiniGrid-ObstructedMaze-2Dlhb-v0", Quarters(Maze(true, true, 4), 1, 2)},
                {"MiniGrid-ObstructedMaze-1Q-v0", Quarters(Maze(true, true, 5), 1, 1)},
                {"MiniGrid-ObstructedMaze-2Q-v0", Quarters(Maze(true, true, 11), 2, 2)},
                {"MiniGrid-ObstructedMaze-Full-v0", Quarters(Maze(true, true, 25), 4, 1)});
PP_REGISTER_ENV(ObstructedMazeFullV1Env, {"MiniGrid-ObstructedMaze-2Dlhb-v1", Quarters(Maze(true, true, 4), 1, 2)},
                {"MiniGrid-ObstructedMaze-1Q-v1", Quarters(Maze(true, true, 5), 1, 1)},
                {"MiniGrid-ObstructedMaze-2Q-v1", Quarters(Maze(true, true, 11), 2, 2)},
                {"MiniGrid-ObstructedMaze-Full-v1", Quarters(Maze(true, true, 25), 4, 1)});
namespace {
// BabyAI levels: room_size, num_dists, and max_steps = room_size**2 x rooms (one navigation).
O Level(int room_size, int num_dists, int rooms = 1) {
  return {{"room_size", int64_t{room_size}},
          {"num_dists", int64_t{num_dists}},
          {"max_episode_steps", int64_t{room_size * room_size * rooms}}};
}
}  // namespace
PP_REGISTER_ENV(BabyAIGoToRedBallGreyEnv, {"BabyAI-GoToRedBallGrey-v0", Level(8, 7)});
PP_REGISTER_ENV(BabyAIGoToRedBallEnv, {"BabyAI-GoToRedBall-v0", Level(8, 7)},
                {"BabyAI-GoToRedBallNoDists-v0", Level(8, 0)});
PP_REGISTER_ENV(BabyAIGoToRedBlueBallEnv, {"BabyAI-GoToRedBlueBall-v0", Level(8, 7)});
PP_REGISTER_ENV(BabyAIGoToObjEnv, {"BabyAI-GoToObj-v0", Level(8, 1)}, {"BabyAI-GoToObjS4-v0", Level(4, 1)},
                {"BabyAI-GoToObjS6-v1", Level(6, 1)});
PP_REGISTER_ENV(BabyAIGoToLocalEnv, {"BabyAI-GoToLocal-v0", Level(8, 8)}, {"BabyAI-GoToLocalS5N2-v0", Level(5, 2)},
                {"BabyAI-GoToLocalS6N2-v0", Level(6, 2)}, {"BabyAI-GoToLocalS6N3-v0", Level(6, 3)},
                {"BabyAI-GoToLocalS6N4-v0", Level(6, 4)}, {"BabyAI-GoToLocalS7N4-v0", Level(7, 4)},
                {"BabyAI-GoToLocalS7N5-v0", Level(7, 5)}, {"BabyAI-GoToLocalS8N2-v0", Level(8, 2)},
                {"BabyAI-GoToLocalS8N3-v0", Level(8, 3)}, {"BabyAI-GoToLocalS8N4-v0", Level(8, 4)},
                {"BabyAI-GoToLocalS8N5-v0", Level(8, 5)}, {"BabyAI-GoToLocalS8N6-v0", Level(8, 6)},
                {"BabyAI-GoToLocalS8N7-v0", Level(8, 7)});
PP_REGISTER_ENV(BabyAIGoToEnv, {"BabyAI-GoTo-v0", Level(8, 18, 9)},
                {"BabyAI-GoToOpen-v0", With(Level(8, 18, 9), "doors_open", true)},
                {"BabyAI-GoToObjMaze-v0", Level(8, 1, 9)},
                {"BabyAI-GoToObjMazeOpen-v0", With(Level(8, 1, 9), "doors_open", true)},
                {"BabyAI-GoToObjMazeS4R2-v0",
                 With(With(Level(4, 1, 4), "num_rows", int64_t{2}), "num_cols", int64_t{2})},
                {"BabyAI-GoToObjMazeS4-v0", Level(4, 1, 9)}, {"BabyAI-GoToObjMazeS5-v0", Level(5, 1, 9)},
                {"BabyAI-GoToObjMazeS6-v0", Level(6, 1, 9)}, {"BabyAI-GoToObjMazeS7-v0", Level(7, 1, 9)});
PP_REGISTER_ENV(BabyAIGoToDoorEnv, {"BabyAI-GoToDoor-v0", {{"max_episode_steps", int64_t{7 * 7 * 9}}}});
PP_REGISTER_ENV(BabyAIOpenEnv, {"BabyAI-Open-v0", {}});
PP_REGISTER_ENV(BabyAIOpenRedDoorEnv, {"BabyAI-OpenRedDoor-v0", {}});
PP_REGISTER_ENV(BabyAIOpenDoorEnv, {"BabyAI-OpenDoor-v0", {}}, {"BabyAI-OpenDoorDebug-v0", {{"debug", true}}},
                {"BabyAI-OpenDoorColor-v0", {{"select_by", std::string("color")}}},
                {"BabyAI-OpenDoorLoc-v0", {{"select_by", std::string("loc")}}});
PP_REGISTER_ENV(BabyAIOpenTwoDoorsEnv, {"BabyAI-OpenTwoDoors-v0", {}},
                {"BabyAI-OpenRedBlueDoors-v0",
                 {{"first_color", std::string("red")}, {"second_color", std::string("blue")}}},
                {"BabyAI-OpenRedBlueDoorsDebug-v0",
                 {{"first_color", std::string("red")}, {"second_color", std::string("blue")}, {"strict", true}}});
PP_REGISTER_ENV(BabyAIOpenDoorsOrderEnv, {"BabyAI-OpenDoorsOrderN2-v0", {{"num_doors", int64_t{2}}}},
                {"BabyAI-OpenDoorsOrderN4-v0", {{"num_doors", int64_t{4}}}},
                {"BabyAI-OpenDoorsOrderN2Debug-v0", {{"num_doors", int64_t{2}}, {"debug", true}}},
                {"BabyAI-OpenDoorsOrderN4Debug-v0", {{"num_doors", int64_t{4}}, {"debug", true}}});
PP_REGISTER_ENV(BabyAIPickupEnv, {"BabyAI-Pickup-v0", {}});
PP_REGISTER_ENV(BabyAIUnblockPickupEnv, {"BabyAI-UnblockPickup-v0", {}});
PP_REGISTER_ENV(BabyAIPickupDistEnv, {"BabyAI-PickupDist-v0", {}}, {"BabyAI-PickupDistDebug-v0", {{"debug", true}}});
PP_REGISTER_ENV(BabyAIPickupAboveEnv, {"BabyAI-PickupAbove-v0", {}});
namespace {
O PutNextLocal(int room_size, int num_objs) {
  return {{"room_size", int64_t{room_size}},
          {"num_objs", int64_t{num_objs}},
          {"max_episode_steps", int64_t{2 * room_size * room_size}}};
}
O PutNext(int room_size, int objs_per_room, bool start_carrying = false) {
  const int64_t steps = 8 * room_size * room_size;
  return {{"room_size", int64_t{room_size}},
          {"objs_per_room", int64_t{objs_per_room}},
          {"start_carrying", start_carrying},
          {"max_steps", steps},
          {"max_episode_steps", steps}};
}
}  // namespace
PP_REGISTER_ENV(BabyAIPutNextLocalEnv, {"BabyAI-PutNextLocal-v0", PutNextLocal(8, 8)},
                {"BabyAI-PutNextLocalS5N3-v0", PutNextLocal(5, 3)}, {"BabyAI-PutNextLocalS6N4-v0", PutNextLocal(6, 4)});
PP_REGISTER_ENV(BabyAIPutNextEnv, {"BabyAI-PutNextS4N1-v0", PutNext(4, 1)}, {"BabyAI-PutNextS5N2-v0", PutNext(5, 2)},
                {"BabyAI-PutNextS5N1-v0", PutNext(5, 1)}, {"BabyAI-PutNextS6N3-v0", PutNext(6, 3)},
                {"BabyAI-PutNextS7N4-v0", PutNext(7, 4)}, {"BabyAI-PutNextS5N2Carrying-v0", PutNext(5, 2, true)},
                {"BabyAI-PutNextS6N3Carrying-v0", PutNext(6, 3, true)},
                {"BabyAI-PutNextS7N4Carrying-v0", PutNext(7, 4, true)});
PP_REGISTER_ENV(BabyAIUnlockEnv, {"BabyAI-Unlock-v0", {}});
PP_REGISTER_ENV(BabyAIUnlockLocalEnv, {"BabyAI-UnlockLocal-v0", {}},
                {"BabyAI-UnlockLocalDist-v0", {{"distractors", true}}});
PP_REGISTER_ENV(BabyAIKeyInBoxEnv, {"BabyAI-KeyInBox-v0", {}});
PP_REGISTER_ENV(BabyAIUnlockPickupEnv, {"BabyAI-UnlockPickup-v0", {}},
                {"BabyAI-UnlockPickupDist-v0", {{"distractors", true}}});
PP_REGISTER_ENV(BabyAIBlockedUnlockPickupEnv, {"BabyAI-BlockedUnlockPickup-v0", {}});
PP_REGISTER_ENV(BabyAIUnlockToUnlockEnv, {"BabyAI-UnlockToUnlock-v0", {}});
PP_REGISTER_ENV(BabyAIActionObjDoorEnv, {"BabyAI-ActionObjDoor-v0", {}});
namespace {
O RoomSized(int room_size, int max_steps, bool fixed) {
  O o = {{"room_size", int64_t{room_size}}, {"max_episode_steps", int64_t{max_steps}}};
  if (fixed) o["max_steps"] = int64_t{max_steps};
  return o;
}
}  // namespace
PP_REGISTER_ENV(BabyAIFindObjEnv, {"BabyAI-FindObjS5-v0", RoomSized(5, 500, true)},
                {"BabyAI-FindObjS6-v0", RoomSized(6, 720, true)}, {"BabyAI-FindObjS7-v0", RoomSized(7, 980, true)});
PP_REGISTER_ENV(BabyAIKeyCorridorEnv, {"BabyAI-KeyCorridor-v0", RoomSized(6, 1080, true)},
                {"BabyAI-KeyCorridorS3R1-v0", With(RoomSized(3, 270, true), "num_rows", int64_t{1})},
                {"BabyAI-KeyCorridorS3R2-v0", With(RoomSized(3, 270, true), "num_rows", int64_t{2})},
                {"BabyAI-KeyCorridorS3R3-v0", RoomSized(3, 270, true)},
                {"BabyAI-KeyCorridorS4R3-v0", RoomSized(4, 480, true)},
                {"BabyAI-KeyCorridorS5R3-v0", RoomSized(5, 750, true)},
                {"BabyAI-KeyCorridorS6R3-v0", RoomSized(6, 1080, true)});
PP_REGISTER_ENV(BabyAIOneRoomEnv, {"BabyAI-OneRoomS8-v0", RoomSized(8, 64, false)},
                {"BabyAI-OneRoomS12-v0", RoomSized(12, 144, false)},
                {"BabyAI-OneRoomS16-v0", RoomSized(16, 256, false)},
                {"BabyAI-OneRoomS20-v0", RoomSized(20, 400, false)});
PP_REGISTER_ENV(BabyAIMoveTwoAcrossEnv,
                {"BabyAI-MoveTwoAcrossS5N2-v0", With(RoomSized(5, 400, true), "objs_per_room", int64_t{2})},
                {"BabyAI-MoveTwoAcrossS8N9-v0", With(RoomSized(8, 1024, true), "objs_per_room", int64_t{9})});
PP_REGISTER_ENV(BabyAIGoToObjDoorEnv, {"BabyAI-GoToObjDoor-v0", {}});
PP_REGISTER_ENV(BabyAIGoToImpUnlockEnv, {"BabyAI-GoToImpUnlock-v0", {}});
namespace {
// A LevelGen level: its keys, and max_episode_steps bounding minigrid's per-episode limit (the most navigations
// its instructions can need x room_size**2 x rooms).
O Gen(O o) {
  auto get = [&](const char* k, int64_t d) { return o.count(k) ? std::get<int64_t>(o[k]) : d; };
  auto str = [&](const char* k, const char* d) { return o.count(k) ? std::get<std::string>(o[k]) : std::string(d); };
  const int64_t room = get("room_size", 8), rooms = get("num_rows", 3) * get("num_cols", 3);
  const std::string actions = str("action_kinds", "goto,pickup,open,putnext"),
                    forms = str("instr_kinds", "action,and,seq");
  int64_t navs = actions.find("putnext") != std::string::npos ? 2 : 1;
  if (forms.find("and") != std::string::npos) navs *= 2;
  if (forms.find("seq") != std::string::npos) navs = navs * (forms.find("and") != std::string::npos ? 2 : 4);
  o["max_episode_steps"] = navs * room * room * rooms;
  return o;
}
}  // namespace
PP_REGISTER_ENV(BabyAILevelGenEnv,
                {"BabyAI-Synth-v0",
                 Gen({{"instr_kinds", std::string("action")}, {"locations", false}, {"implicit_unlock", false}})},
                {"BabyAI-SynthS5R2-v0", Gen({{"instr_kinds", std::string("action")},
                                             {"locations", false},
                                             {"implicit_unlock", false},
                                             {"room_size", int64_t{5}},
                                             {"num_rows", int64_t{2}}})},
                {"BabyAI-SynthLoc-v0", Gen({{"instr_kinds", std::string("action")}, {"implicit_unlock", false}})},
                {"BabyAI-SynthSeq-v0", Gen({{"implicit_unlock", false}})},
                {"BabyAI-MiniBossLevel-v0", Gen({{"num_cols", int64_t{2}},
                                                 {"num_rows", int64_t{2}},
                                                 {"room_size", int64_t{5}},
                                                 {"num_dists", int64_t{7}},
                                                 {"locked_room_prob", 0.25}})},
                {"BabyAI-BossLevel-v0", Gen({})},
                {"BabyAI-BossLevelNoUnlock-v0", Gen({{"locked_room_prob", 0.0}, {"implicit_unlock", false}})},
                {"BabyAI-PickupLoc-v0", Gen({{"action_kinds", std::string("pickup")},
                                             {"instr_kinds", std::string("action")},
                                             {"num_rows", int64_t{1}},
                                             {"num_cols", int64_t{1}},
                                             {"num_dists", int64_t{8}},
                                             {"locked_room_prob", 0.0},
                                             {"unblocking", false}})},
                {"BabyAI-GoToSeq-v0", Gen({{"action_kinds", std::string("goto")},
                                           {"locked_room_prob", 0.0},
                                           {"locations", false},
                                           {"unblocking", false}})},
                {"BabyAI-GoToSeqS5R2-v0", Gen({{"action_kinds", std::string("goto")},
                                               {"locked_room_prob", 0.0},
                                               {"locations", false},
                                               {"unblocking", false},
                                               {"room_size", int64_t{5}},
                                               {"num_rows", int64_t{2}},
                                               {"num_cols", int64_t{2}},
                                               {"num_dists", int64_t{4}}})});

}  // namespace pp::minigrid
