// Runs when the test binary is loaded, before XCTest starts: registers the store engines (TestEngines.swift), as
// the executable's main.swift does first thing.
#include "registration.h"

extern void gatehouse_register_test_engines(void);

__attribute__((constructor)) static void gatehouse_test_engines_at_load(void) {
    gatehouse_register_test_engines();
}
