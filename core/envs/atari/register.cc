// Atari family: one registration line, one task id per ROM that ALE supports in single-player mode (every ROM
// the ale-py 0.12.1 wheel ships except the multi-player-only combat, joust, maze_craze and warlords). Ids follow
// EnvPool: the ROM's snake_case name in CamelCase (str.capitalize per word) + "-v5".
#include "ale/common/Log.hpp"
#include "core/envs/atari/atari_env.h"

namespace pp::atari {

namespace {
const bool kQuietAle = [] {
  ale::Logger::setMode(ale::Logger::Error);  // no welcome banner per env
  return true;
}();
}  // namespace

// One registration line per ROM reads best as a table: keep clang-format out of it.
// clang-format off
#define PP_ATARI(id, rom) {id "-v5", {{"task", std::string(rom)}}}

PP_REGISTER_ENV(AtariEnv,
                PP_ATARI("Adventure", "adventure"),
                PP_ATARI("AirRaid", "air_raid"),
                PP_ATARI("Alien", "alien"),
                PP_ATARI("Amidar", "amidar"),
                PP_ATARI("Assault", "assault"),
                PP_ATARI("Asterix", "asterix"),
                PP_ATARI("Asteroids", "asteroids"),
                PP_ATARI("Atlantis", "atlantis"),
                PP_ATARI("Atlantis2", "atlantis2"),
                PP_ATARI("Backgammon", "backgammon"),
                PP_ATARI("BankHeist", "bank_heist"),
                PP_ATARI("BasicMath", "basic_math"),
                PP_ATARI("BattleZone", "battle_zone"),
                PP_ATARI("BeamRider", "beam_rider"),
                PP_ATARI("Berzerk", "berzerk"),
                PP_ATARI("Blackjack", "blackjack"),
                PP_ATARI("Bowling", "bowling"),
                PP_ATARI("Boxing", "boxing"),
                PP_ATARI("Breakout", "breakout"),
                PP_ATARI("Carnival", "carnival"),
                PP_ATARI("Casino", "casino"),
                PP_ATARI("Centipede", "centipede"),
                PP_ATARI("ChopperCommand", "chopper_command"),
                PP_ATARI("CrazyClimber", "crazy_climber"),
                PP_ATARI("Crossbow", "crossbow"),
                PP_ATARI("Darkchambers", "darkchambers"),
                PP_ATARI("Defender", "defender"),
                PP_ATARI("DemonAttack", "demon_attack"),
                PP_ATARI("DonkeyKong", "donkey_kong"),
                PP_ATARI("DoubleDunk", "double_dunk"),
                PP_ATARI("Earthworld", "earthworld"),
                PP_ATARI("ElevatorAction", "elevator_action"),
                PP_ATARI("Enduro", "enduro"),
                PP_ATARI("Entombed", "entombed"),
                PP_ATARI("Et", "et"),
                PP_ATARI("FishingDerby", "fishing_derby"),
                PP_ATARI("FlagCapture", "flag_capture"),
                PP_ATARI("Freeway", "freeway"),
                PP_ATARI("Frogger", "frogger"),
                PP_ATARI("Frostbite", "frostbite"),
                PP_ATARI("Galaxian", "galaxian"),
                PP_ATARI("Gopher", "gopher"),
                PP_ATARI("Gravitar", "gravitar"),
                PP_ATARI("Hangman", "hangman"),
                PP_ATARI("HauntedHouse", "haunted_house"),
                PP_ATARI("Hero", "hero"),
                PP_ATARI("HumanCannonball", "human_cannonball"),
                PP_ATARI("IceHockey", "ice_hockey"),
                PP_ATARI("Jamesbond", "jamesbond"),
                PP_ATARI("JourneyEscape", "journey_escape"),
                PP_ATARI("Kaboom", "kaboom"),
                PP_ATARI("Kangaroo", "kangaroo"),
                PP_ATARI("KeystoneKapers", "keystone_kapers"),
                PP_ATARI("KingKong", "king_kong"),
                PP_ATARI("Klax", "klax"),
                PP_ATARI("Koolaid", "koolaid"),
                PP_ATARI("Krull", "krull"),
                PP_ATARI("KungFuMaster", "kung_fu_master"),
                PP_ATARI("LaserGates", "laser_gates"),
                PP_ATARI("LostLuggage", "lost_luggage"),
                PP_ATARI("MarioBros", "mario_bros"),
                PP_ATARI("MiniatureGolf", "miniature_golf"),
                PP_ATARI("MontezumaRevenge", "montezuma_revenge"),
                PP_ATARI("MrDo", "mr_do"),
                PP_ATARI("MsPacman", "ms_pacman"),
                PP_ATARI("NameThisGame", "name_this_game"),
                PP_ATARI("Othello", "othello"),
                PP_ATARI("Pacman", "pacman"),
                PP_ATARI("Phoenix", "phoenix"),
                PP_ATARI("Pitfall", "pitfall"),
                PP_ATARI("Pitfall2", "pitfall2"),
                PP_ATARI("Pong", "pong"),
                PP_ATARI("Pooyan", "pooyan"),
                PP_ATARI("PrivateEye", "private_eye"),
                PP_ATARI("Qbert", "qbert"),
                PP_ATARI("Riverraid", "riverraid"),
                PP_ATARI("RoadRunner", "road_runner"),
                PP_ATARI("Robotank", "robotank"),
                PP_ATARI("Seaquest", "seaquest"),
                PP_ATARI("SirLancelot", "sir_lancelot"),
                PP_ATARI("Skiing", "skiing"),
                PP_ATARI("Solaris", "solaris"),
                PP_ATARI("SpaceInvaders", "space_invaders"),
                PP_ATARI("SpaceWar", "space_war"),
                PP_ATARI("StarGunner", "star_gunner"),
                PP_ATARI("Superman", "superman"),
                PP_ATARI("Surround", "surround"),
                PP_ATARI("Tennis", "tennis"),
                PP_ATARI("Tetris", "tetris"),
                PP_ATARI("TicTacToe3d", "tic_tac_toe_3d"),
                PP_ATARI("TimePilot", "time_pilot"),
                PP_ATARI("Trondead", "trondead"),
                PP_ATARI("Turmoil", "turmoil"),
                PP_ATARI("Tutankham", "tutankham"),
                PP_ATARI("UpNDown", "up_n_down"),
                PP_ATARI("Venture", "venture"),
                PP_ATARI("VideoCheckers", "video_checkers"),
                PP_ATARI("VideoChess", "video_chess"),
                PP_ATARI("VideoCube", "video_cube"),
                PP_ATARI("VideoPinball", "video_pinball"),
                PP_ATARI("WizardOfWor", "wizard_of_wor"),
                PP_ATARI("WordZapper", "word_zapper"),
                PP_ATARI("YarsRevenge", "yars_revenge"),
                PP_ATARI("Zaxxon", "zaxxon"));

#undef PP_ATARI

// clang-format on

}  // namespace pp::atari
