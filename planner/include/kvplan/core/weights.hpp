// Parameter counts and weight bytes of a model, by component, total and active (MoE).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kvplan/core/model.hpp"

namespace kvplan {

/// Parameters of one component: `matrix` are linear-layer weights (what quantisation packs),
/// `vector` are biases, norms, sinks, SSM A/D/dt vectors (always kept in the model dtype).
struct ParamPart {
  std::string name;
  i64 matrix = 0;
  i64 vector = 0;
  bool quantisable = false;  // linear layers a quantization_config may pack
  i64 total() const { return add(matrix, vector, "parameter count"); }
};

struct ParamCount {
  std::vector<ParamPart> parts;  // embedding, position_embedding, lm_head, attention, mamba, mlp,
                                 // routed_experts, shared_experts, router, norms, vision; and, when
                                 // the model has them (Gemma 3n / 4), per_layer_embedding (the PLE
                                 // table) and per_layer_inputs (its projections, AltUp, Laurel)
  i64 total = 0;                 // text model + vision tower
  i64 text_total = 0;            // without the vision tower
  i64 active = 0;                // per token: total minus the routed experts a token does not use and
                                 // the per-layer embedding table (Gemma 3n / 4), of which it reads a row
};

/// Counts every parameter: embeddings (tied counted once), learned positions, per-layer attention
/// (q/k/v/o, biases, q/k norms, sinks), MLA projections, Mamba mixers, dense and MoE MLPs (routed
/// and shared experts, router), norms, final norm, lm_head, and the vision tower estimate.
ParamCount count_params(const ModelSpec& m);

struct WeightBytes {
  i64 total = 0;
  std::string basis;  // e.g. "bf16 (2 B/param)" or "awq 4-bit g128 on linear layers, bf16 elsewhere"
};

/// Bytes of the weights: quantisable matrices at quant.linear_bits (when set) and everything else
/// at the model dtype. ceil(matrix * bits / 8) per component.
WeightBytes weight_bytes(const ModelSpec& m, const ParamCount& p);
/// Bytes of one component as weight_bytes counts it (packed at quant.linear_bits, GGUF head and
/// embedding bits, vectors at quant.vector_bits, else the model dtype).
i64 part_weight_bytes(const ModelSpec& m, const ParamPart& part);

/// A model's weights by llama.cpp layer (ggml-org/llama.cpp src/llama-model.cpp load_tensors: the input layer is
/// always on the CPU, block i goes where layer i runs, the output layer where it runs): `input` the token embedding
/// and learned positions; `blocks[i]` every tensor of decoder layer i (attention or mixer, MLP or experts, norms,
/// biases; both halves of a block whose entries run side by side, Falcon-H1's, `decoder_block_of`);
/// `output` the final norm and the head. A tied head is loaded a second time as the output tensor
/// (TENSOR_DUPLICATED), so `output` then holds the embedding's bytes again. From the GGUF tensor table when the
/// model has one (ModelSpec::exact_layer_bytes); else each block's own parameters priced as weight_bytes prices
/// them (its recipe's types for a llama-quantize file type), scaled to a weights file's exact total when one is
/// known. The vision tower is not here (llama.cpp loads it from --mmproj).
struct LayerWeights {
  i64 input = 0;
  std::vector<i64> blocks;
  std::vector<i64> experts;  // the routed experts' part of each block (what --n-cpu-moe moves to host memory)
  i64 output = 0;
  i64 output_copy = 0;  // the part of `output` that is the tied embedding's second copy (0 when untied)
  std::string basis;  // "GGUF tensor table by layer" / "each layer its own parameters" (the format: weight_bytes' basis)
};
LayerWeights layer_weight_bytes(const ModelSpec& m);

/// Whether quantisation packs this component's matrices (linear layers the method quantises: attention unless
/// the method leaves it, only the routed experts when experts_only).
bool part_packed(const WeightQuant& q, const ParamPart& part);

/// Routed-expert parameters of one layer (0 for a dense layer): experts x (gated MLP of expert_intermediate + biases).
i64 expert_params(const ModelSpec& m, const Layer& l);

/// Effective bits per weight for a group-quantised int format: bits + scale_bits/group (+ zero bits).
double group_quant_bits(int bits, i64 group, int scale_bits, int zero_bits);

}  // namespace kvplan
