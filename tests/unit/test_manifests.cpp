// Kubernetes manifests, Helm values and compose files -> engine containers.
#include <catch2/catch.hpp>

#include "kvplan/io/manifests.hpp"

using namespace kvplan;
