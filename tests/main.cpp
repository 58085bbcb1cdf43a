// Catch2 v2 main for the kvplan unit and property tests.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
