// ViZDoom family: EnvPool's 21 ids. The 16 scenarios of the vizdoom wheel (its scenarios/ folder), the four
// D1..D4 maps EnvPool ships in the envpool-assets package, and VizdoomCustom-v1 (pass cfg_path yourself).
// Ids follow EnvPool: the scenario's snake_case name in CamelCase + "-v1".
#include "core/envs/vizdoom/vizdoom_env.h"

namespace pp::vizdoom {

// One registration line per scenario reads best as a table: keep clang-format out of it.
// clang-format off
#define PP_VZD(id, dir, name) \
  {id, {{"cfg_path", std::string(dir "/" name ".cfg")}, {"wad_path", std::string(dir "/" name ".wad")}}}
#define PP_VZD_WHEEL "{pkgdir:vizdoom}/scenarios"
#define PP_VZD_ASSETS "{pkgdir:envpool_assets}/vizdoom/maps"
// Cig and MultiDuel maps have deathmatch starts only: without -deathmatch the engine exits at start (EnvPool's
// defaults crash there). The rules are those of vizdoom's own cig/multiplayer examples.
#define PP_VZD_DM(id, name) \
  {id, {{"cfg_path", std::string(PP_VZD_WHEEL "/" name ".cfg")}, {"wad_path", std::string(PP_VZD_WHEEL "/" name ".wad")}, \
        {"game_args", std::string("-deathmatch +sv_forcerespawn 1 +sv_noautoaim 1 +sv_respawnprotect 1 " \
                                  "+sv_spawnfarthest 1 +sv_nocrouch 1")}}}

PP_REGISTER_ENV(VizdoomEnv,
                PP_VZD("D1Basic-v1", PP_VZD_ASSETS, "D1_basic"),
                PP_VZD("D2Navigation-v1", PP_VZD_ASSETS, "D2_navigation"),
                PP_VZD("D3Battle-v1", PP_VZD_ASSETS, "D3_battle"),
                PP_VZD("D4Battle2-v1", PP_VZD_ASSETS, "D4_battle2"),
                PP_VZD("Basic-v1", PP_VZD_WHEEL, "basic"),
                PP_VZD("BasicAudio-v1", PP_VZD_WHEEL, "basic_audio"),
                PP_VZD("BasicNotifications-v1", PP_VZD_WHEEL, "basic_notifications"),
                PP_VZD_DM("Cig-v1", "cig"),
                PP_VZD("DeadlyCorridor-v1", PP_VZD_WHEEL, "deadly_corridor"),
                PP_VZD("Deathmatch-v1", PP_VZD_WHEEL, "deathmatch"),
                PP_VZD("DefendTheCenter-v1", PP_VZD_WHEEL, "defend_the_center"),
                PP_VZD("DefendTheLine-v1", PP_VZD_WHEEL, "defend_the_line"),
                PP_VZD("HealthGathering-v1", PP_VZD_WHEEL, "health_gathering"),
                PP_VZD("HealthGatheringSupreme-v1", PP_VZD_WHEEL, "health_gathering_supreme"),
                PP_VZD_DM("MultiDuel-v1", "multi_duel"),
                PP_VZD("MyWayHome-v1", PP_VZD_WHEEL, "my_way_home"),
                PP_VZD("PredictPosition-v1", PP_VZD_WHEEL, "predict_position"),
                PP_VZD("RocketBasic-v1", PP_VZD_WHEEL, "rocket_basic"),
                PP_VZD("SimplerBasic-v1", PP_VZD_WHEEL, "simpler_basic"),
                PP_VZD("TakeCover-v1", PP_VZD_WHEEL, "take_cover"),
                {"VizdoomCustom-v1", {}});
// clang-format on

}  // namespace pp::vizdoom
