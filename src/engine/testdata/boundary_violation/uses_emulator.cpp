// A deliberate violation for the engine_boundary_detects_violation test: never compiled.
#include "emulator/emulator.h"
