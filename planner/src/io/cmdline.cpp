// Serving-engine command lines (see cmdline.hpp): a POSIX-shell word splitter, then one flag table per
// engine saying which flags become kvplan deployment settings, which do not change GPU memory (ignored),
// which change it in ways kvplan does not model and which recent engine versions removed (both ignored
// with a warning). Flags match as each engine's own parser matches them: argparse (vLLM, SGLang) with
// unique-prefix abbreviations, click (TensorRT-LLM) and llama.cpp exactly; "_" and "-" are the same in
// long flag names. Flag names were checked against vllm/engine/arg_utils.py, sglang/srt/server_args.py,
// tensorrt_llm/commands/serve.py and llama.cpp tools/server/README.md.
#include "kvplan/io/cmdline.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "kvplan/core/checked.hpp"
#include "kvplan/core/engine.hpp"
#include "kvplan/core/suggest.hpp"

namespace kvplan::io {

// ---------------------------------------------------------------------------------------------------
// Shell splitting
// ---------------------------------------------------------------------------------------------------

namespace {

// Control operators and redirections, longest first.
constexpr std::string_view kOperators[] = {"<<-", "&>>", "&&", "||", ";;", "|&", ">>", "<<", ">&",
                                           "<&",  "<>",  ">|", "&>", "|",  "&",  ";",  "<",  ">"};

bool is_operator_char(char c) { return c == '|' || c == '&' || c == ';' || c == '<' || c == '>'; }

class Splitter {
 public:
  Splitter(const std::string& text, const std::string& where) : t_(text), where_(where) {}

  std::vector<std::string> run() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\\') {
        backslash();
      } else if (c == '\'') {
        single_quoted();
      } else if (c == '"') {
        double_quoted();
      } else if ((c == '$' && (peek(1) == '(' || peek(1) == '{')) || c == '`' || (c == '{' && peek(1) == '{')) {
        word_ += group();
        in_word_ = true;
      } else if (c == '#' && !in_word_) {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;  // comment: up to the newline, which ends the line below
      } else if (c == '\n') {
        end_word();
        advance();
        heredoc_bodies();
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        end_word();
        ++i_;
      } else if (is_operator_char(c)) {
        op();
      } else {
        word_ += c;
        in_word_ = true;
        ++i_;
      }
    }
    end_word();
    return out_;
  }

 private:
  const std::string& t_;
  const std::string& where_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::vector<std::string> out_;
  std::string word_;
  bool in_word_ = false;  // a word has begun (it may be empty: '')
  bool quoted_ = false;   // the word holds quoted text (so it is no redirection's fd number)
  bool delimiter_next_ = false, strip_tabs_ = false;
  std::vector<std::pair<std::string, bool>> heredocs_;  // delimiter, <<- (strip leading tabs)

  char peek(std::size_t k) const { return i_ + k < t_.size() ? t_[i_ + k] : '\0'; }
  char advance() {
    const char c = t_[i_++];
    if (c == '\n') ++line_;
    return c;
  }

  void end_word() {
    if (!in_word_) return;
    if (delimiter_next_) {
      heredocs_.emplace_back(word_, strip_tabs_);
      delimiter_next_ = false;
    }
    out_.push_back(word_);
    word_.clear();
    in_word_ = quoted_ = false;
  }

  void backslash() {
    if (peek(1) == '\n' || (peek(1) == '\r' && peek(2) == '\n')) {  // line continuation
      i_ += peek(1) == '\r' ? 3 : 2;
      ++line_;
    } else if (i_ + 1 < t_.size()) {
      ++i_;
      word_ += advance();
      in_word_ = true;
    } else {  // a lone backslash at the end stays
      word_ += '\\';
      in_word_ = true;
      ++i_;
    }
  }

  [[noreturn]] void unterminated(const std::string& what, int line, const std::string& fix) const {
    throw InputError(where_, "unterminated " + what + " starting at line " + std::to_string(line), fix);
  }

  void single_quoted() {
    const int start = line_;
    ++i_;
    while (true) {
      if (i_ >= t_.size()) unterminated("' quote", start, "close the quote");
      const char c = advance();
      if (c == '\'') break;
      word_ += c;
    }
    in_word_ = quoted_ = true;
  }

  void double_quoted() {
    const int start = line_;
    ++i_;
    while (true) {
      if (i_ >= t_.size()) unterminated("\" quote", start, "close the quote");
      const char c = t_[i_];
      if (c == '"') {
        ++i_;
        break;
      }
      if (c == '\\' && (peek(1) == '"' || peek(1) == '\\' || peek(1) == '$' || peek(1) == '`' || peek(1) == '\n')) {
        ++i_;
        const char e = advance();
        if (e != '\n') word_ += e;  // backslash-newline inside double quotes joins the lines
      } else if ((c == '$' && (peek(1) == '(' || peek(1) == '{')) || c == '`') {
        word_ += group();
      } else {
        word_ += advance();
      }
    }
    in_word_ = quoted_ = true;
  }

  // $(...), $((...)), ${...}, `...` and Helm's {{ ... }}: copied as written (kvplan expands nothing).
  std::string group() {
    const int start = line_;
    const std::size_t begin = i_;
    if (t_[i_] == '`') {
      ++i_;
      while (i_ < t_.size() && t_[i_] != '`') {
        if (t_[i_] == '\\') advance();
        if (i_ < t_.size()) advance();
      }
      if (i_ >= t_.size()) unterminated("`", start, "close it with `");
      ++i_;
      return t_.substr(begin, i_ - begin);
    }
    if (t_[i_] == '{') {  // {{ ... }}
      const std::size_t end = t_.find("}}", i_ + 2);
      if (end == std::string::npos) unterminated("{{", start, "close it with }}");
      while (i_ < end + 2) advance();
      return t_.substr(begin, i_ - begin);
    }
    const char open = t_[i_ + 1], close = open == '(' ? ')' : '}';
    i_ += 2;
    int depth = 1;
    while (i_ < t_.size() && depth > 0) {
      const char c = advance();
      if (c == '\\' && i_ < t_.size()) {
        advance();
      } else if (c == '\'') {
        while (i_ < t_.size() && t_[i_] != '\'') advance();
        if (i_ < t_.size()) ++i_;
      } else if (c == '"') {
        while (i_ < t_.size() && t_[i_] != '"') {
          if (t_[i_] == '\\') advance();
          if (i_ < t_.size()) advance();
        }
        if (i_ < t_.size()) ++i_;
      } else if (c == open) {
        ++depth;
      } else if (c == close) {
        --depth;
      }
    }
    if (depth > 0) unterminated(std::string("$") + open, start, std::string("close it with ") + close);
    return t_.substr(begin, i_ - begin);
  }

  void op() {
    std::string_view found;
    for (std::string_view o : kOperators)
      if (t_.compare(i_, o.size(), o) == 0) {
        found = o;
        break;
      }
    std::string token(found);
    i_ += found.size();
    const bool redirect = token[0] == '<' || token[0] == '>';
    const bool fd_number = in_word_ && !quoted_ && !word_.empty() &&
                           std::all_of(word_.begin(), word_.end(), [](unsigned char ch) { return std::isdigit(ch); });
    if (redirect && fd_number) {  // 2>&1: the digits belong to the redirection
      token = word_ + token;
      word_.clear();
      in_word_ = false;
    } else {
      end_word();
    }
    out_.push_back(token);
    if (found == "<<" || found == "<<-") {
      delimiter_next_ = true;
      strip_tabs_ = found == "<<-";
    }
  }

  // After the newline that ends a line with here-documents: skip their bodies (they are stdin).
  void heredoc_bodies() {
    for (const auto& [delimiter, strip] : heredocs_) {
      while (i_ < t_.size()) {
        const std::size_t eol = std::min(t_.find('\n', i_), t_.size());
        std::string_view line(t_.data() + i_, eol - i_);
        i_ = eol;
        if (i_ < t_.size()) advance();
        if (strip) line.remove_prefix(std::min(line.find_first_not_of('\t'), line.size()));
        if (line == delimiter) break;
      }
    }
    heredocs_.clear();
  }
};

}  // namespace

std::vector<std::string> shell_split(const std::string& text, const std::string& where) {
  return Splitter(text, where).run();
}

// ---------------------------------------------------------------------------------------------------
// Engine flag tables
// ---------------------------------------------------------------------------------------------------

namespace {

enum class Arity { none, one, optional, many };  // optional: on/off/auto/true/false or a number may follow
enum class Kind { setting, model, ignored, unmodelled, removed, config_file };
enum class Conv {
  plain,
  boolean,           // switch: "true" when given (or =true), removed again by =false / --no-
  boolean_inverted,  // switch that turns the kvplan switch off (llama.cpp --kv-unified)
  human_int,         // vLLM integers: 32k = 32000, 32K = 32768; -1 / auto = let vLLM choose
  quantization,      // vLLM / SGLang --quantization -> kvplan --weight-format
  gpu_layers,        // llama.cpp -ngl: all = -1, auto = let llama.cpp choose
  auto_count,        // -1 / auto = let the engine choose
};

struct Flag {
  std::vector<std::string> names;  // as the engine spells them; the first names the flag in lists
  Arity arity = Arity::one;
  Kind kind = Kind::ignored;
  std::string setting;  // kvplan flag for Kind::setting
  Conv conv = Conv::plain;
};

struct EngineSpec {
  std::string name;   // kvplan --engine name
  std::string label;  // as people write it
  bool abbreviations = false;     // argparse: a unique prefix of a long flag selects it
  bool positional_model = false;  // vllm serve MODEL, trtllm-serve MODEL
  std::string model_hint;         // how the engine takes the model, for "unexpected argument"
  std::vector<Flag> flags;
  std::map<std::string, std::pair<std::size_t, std::size_t>> index;  // normalized name -> flag, name

  const Flag& flag(std::pair<std::size_t, std::size_t> at) const { return flags[at.first]; }
  const std::string& spelled(std::pair<std::size_t, std::size_t> at) const { return flags[at.first].names[at.second]; }
};

std::vector<std::string> split_on(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const std::size_t end = std::min(s.find(sep, start), s.size());
    if (end > start) out.emplace_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

// Long flags compare with "_" read as "-": vLLM and llama.cpp read both, trtllm-serve spells them with "_".
std::string normalize(std::string name) {
  if (name.rfind("--", 0) == 0) std::replace(name.begin(), name.end(), '_', '-');
  return name;
}

Flag to(const char* names, const char* setting, Conv conv = Conv::plain) {
  return Flag{split_on(names, '|'), Arity::one, Kind::setting, setting, conv};
}
Flag on(const char* names, const char* setting, Conv conv = Conv::boolean) {
  return Flag{split_on(names, '|'), Arity::none, Kind::setting, setting, conv};
}
Flag model(const char* names) { return Flag{split_on(names, '|'), Arity::one, Kind::model, "", Conv::plain}; }

// A list of flags of one kind and arity: entries separated by spaces, aliases joined by '|'.
struct Group {
  Kind kind;
  Arity arity;
  const char* list;
};

EngineSpec build(EngineSpec e, std::vector<Flag> mapped, std::initializer_list<Group> groups) {
  e.flags = std::move(mapped);
  for (const Group& g : groups)
    for (const std::string& entry : split_on(g.list, ' '))
      e.flags.push_back(Flag{split_on(entry, '|'), g.arity, g.kind, "", Conv::plain});
  for (std::size_t f = 0; f < e.flags.size(); ++f)
    for (std::size_t n = 0; n < e.flags[f].names.size(); ++n)
      if (!e.index.emplace(normalize(e.flags[f].names[n]), std::pair{f, n}).second)
        throw std::logic_error("kvplan: " + e.name + " flag table lists " + e.flags[f].names[n] + " twice");
  return e;
}

const EngineSpec& vllm_spec() {
  static const EngineSpec e = build(
      {"vllm", "vLLM", true, true, "vllm serve takes one positional argument, the model", {}, {}},
      {
          model("--model"),
          to("--tensor-parallel-size|-tp", "--tensor-parallel-size"),
          to("--pipeline-parallel-size|-pp", "--pipeline-parallel-size"),
          to("--data-parallel-size|-dp", "--data-parallel-size"),
          on("--enable-expert-parallel|-ep", "--enable-expert-parallel"),
          to("--gpu-memory-utilization", "--gpu-memory-utilization"),
          to("--max-model-len", "--max-model-len", Conv::human_int),
          to("--max-num-seqs", "--max-num-seqs"),
          to("--max-num-batched-tokens", "--max-num-batched-tokens", Conv::human_int),
          to("--block-size", "--block-size"),
          to("--kv-cache-memory-bytes", "--kv-cache-memory-bytes", Conv::human_int),
          to("--kv-cache-dtype", "--kv-dtype"),
          to("--quantization|-q", "--weight-format", Conv::quantization),
          on("--enforce-eager", "--enforce-eager"),
      },
      {
          {Kind::ignored, Arity::one,
           "--host --port --uds --uvicorn-log-level --api-key --allowed-origins --allowed-methods --allowed-headers "
           "--chat-template --chat-template-content-format --response-role --ssl-keyfile --ssl-certfile "
           "--ssl-ca-certs --ssl-cert-reqs --root-path --middleware --tool-call-parser --tool-parser-plugin "
           "--tool-server --log-config-file --max-log-len --h11-max-incomplete-event-size --h11-max-header-count "
           "--api-server-count|-asc --tokenizer --tokenizer-mode --hf-config-path --download-dir --load-format "
           "--config-format --dtype --seed --revision --code-revision --tokenizer-revision --hf-token "
           "--rope-scaling --rope-theta --max-logprobs --logprobs-mode --logits-processor-pattern "
           "--generation-config --override-generation-config --model-impl --override-attention-dtype "
           "--io-processor-plugin --runner --convert --task --pooler-config --override-pooler-config "
           "--reasoning-parser --reasoning-parser-plugin --structured-outputs-config --distributed-executor-backend "
           "--data-parallel-rank|-dpn --data-parallel-start-rank|-dpr --data-parallel-size-local|-dpl "
           "--data-parallel-address|-dpa --data-parallel-rpc-port|-dpp --data-parallel-backend|-dpb "
           "--nnodes|-n --node-rank|-r --master-addr --master-port --eplb-config --num-redundant-experts "
           "--expert-placement-strategy --max-parallel-loading-workers --worker-cls --worker-extension-cls "
           "--prefix-caching-hash-algo --swap-space --limit-mm-per-prompt --media-io-kwargs --mm-processor-kwargs "
           "--mm-processor-cache-gb --mm-processor-cache-type --mm-encoder-tp-mode --mm-encoder-attn-backend "
           "--video-pruning-rate --allowed-local-media-path --allowed-media-domains --max-loras --max-lora-rank "
           "--lora-extra-vocab-size --lora-dtype --max-cpu-loras --default-mm-loras --show-hidden-metrics-for-version "
           "--otlp-traces-endpoint --collect-detailed-traces --max-num-partial-prefills --max-long-partial-prefills "
           "--long-prefill-token-threshold --num-lookahead-slots --scheduling-policy --scheduler-cls "
           "--scheduler-delay-factor --preemption-mode --compilation-config|-O --kv-transfer-config "
           "--kv-events-config --ec-transfer-config --additional-config --model-loader-extra-config "
           "--pt-load-map-location --safetensors-load-strategy --calculate-kv-scales --device"},
          {Kind::ignored, Arity::many, "--served-model-name --lora-modules --cuda-graph-sizes --logits-processors --ignore-patterns"},
          {Kind::ignored, Arity::none,
           "--disable-log-requests --enable-log-requests --disable-log-stats --enable-log-outputs "
           "--aggregate-engine-logging --trust-remote-code --skip-tokenizer-init --enable-prompt-embeds "
           "--disable-cascade-attn --enable-prefix-caching --enable-chunked-prefill --disable-chunked-mm-input "
           "--async-scheduling --enable-eplb --enable-dbo --ray-workers-use-nsight --disable-custom-all-reduce "
           "--enable-multimodal-encoder-data-parallel --enable-lora-bias --fully-sharded-loras --enable-sleep-mode "
           "--headless --data-parallel-hybrid-lb --data-parallel-external-lb --enable-auto-tool-choice "
           "--exclude-tools-when-tool-choice-none --disable-uvicorn-access-log --allow-credentials "
           "--return-tokens-as-token-ids --disable-frontend-multiprocessing --enable-request-id-headers "
           "--disable-fastapi-docs --enable-prompt-tokens-details --enable-server-load-tracking "
           "--enable-force-include-usage --enable-tokenizer-info-endpoint --enable-ssl-refresh --log-error-stack "
           "--disable-mm-preprocessor-cache --interleave-mm-strings --skip-mm-profiling --use-tqdm-on-load"},
          {Kind::unmodelled, Arity::one,
           "--cpu-offload-gb --num-gpu-blocks-override --speculative-config --mamba-cache-dtype "
           "--mamba-ssm-cache-dtype --hf-overrides"},
          {Kind::unmodelled, Arity::none, "--enable-lora --disable-sliding-window --disable-hybrid-kv-cache-manager --kv-sharing-fast-prefill"},
          {Kind::removed, Arity::one,
           "--num-scheduler-steps --max-seq-len-to-capture --max-context-len-to-capture --tokenizer-pool-size "
           "--tokenizer-pool-type --tokenizer-pool-extra-config --speculative-model --num-speculative-tokens "
           "--speculative-draft-tensor-parallel-size --guided-decoding-backend --qlora-adapter-name-or-path "
           "--long-lora-scaling-factors --override-neuron-config"},
          {Kind::removed, Arity::none,
           "--use-v2-block-manager --multi-step-stream-outputs --disable-async-output-proc --worker-use-ray --engine-use-ray"},
          {Kind::config_file, Arity::one, "--config"},
      });
  return e;
}

const EngineSpec& sglang_spec() {
  static const EngineSpec e = build(
      {"sglang", "SGLang", true, false, "SGLang takes the model as --model-path", {}, {}},
      {
          model("--model-path|--model"),
          to("--tensor-parallel-size|--tp-size|--tp", "--tensor-parallel-size"),
          to("--pipeline-parallel-size|--pp-size", "--pipeline-parallel-size"),
          to("--data-parallel-size|--dp-size|--dp", "--data-parallel-size"),
          to("--expert-parallel-size|--ep-size|--ep", "--expert-parallel-size"),
          to("--mem-fraction-static", "--mem-fraction-static"),
          to("--page-size", "--page-size"),
          to("--max-total-tokens", "--max-total-tokens"),
          to("--context-length", "--max-model-len"),
          to("--chunked-prefill-size", "--max-num-batched-tokens", Conv::auto_count),
          to("--max-running-requests", "--max-num-seqs"),
          to("--kv-cache-dtype", "--kv-dtype"),
          to("--quantization", "--weight-format", Conv::quantization),
          on("--disable-cuda-graph", "--enforce-eager"),
      },
      {
          {Kind::ignored, Arity::one,
           "--tokenizer-path --tokenizer-mode --tokenizer-worker-num --load-format --model-loader-extra-config "
           "--revision --model-impl --host --port --warmups --nccl-port --dtype --quantization-param-path "
           "--max-queued-requests --max-prefill-tokens --schedule-policy --priority-scheduling-preemption-threshold "
           "--schedule-conservativeness --radix-eviction-policy --device --pp-max-micro-batch-size --stream-interval "
           "--random-seed --constrained-json-whitespace-pattern --watchdog-timeout --dist-timeout --download-dir "
           "--base-gpu-id --gpu-id-step --log-level --log-level-http --log-requests-level --crash-dump-folder "
           "--tokenizer-metrics-custom-labels-header --gc-warning-threshold-secs --decode-log-interval "
           "--kv-events-config --otlp-traces-endpoint --api-key --served-model-name --weight-version --chat-template "
           "--completion-template --file-storage-path --reasoning-parser --tool-call-parser --tool-server "
           "--sampling-defaults --load-balance-method --load-watch-interval --dist-init-addr|--nccl-init-addr "
           "--nnodes --node-rank --json-model-override-args --preferred-sampling-params --max-lora-rank "
           "--max-loras-per-batch --max-loaded-loras --lora-eviction-policy --lora-backend --max-lora-chunk-size "
           "--attention-backend --prefill-attention-backend --decode-attention-backend --sampling-backend "
           "--grammar-backend --mm-attention-backend --nsa-prefill-backend --nsa-decode-backend "
           "--speculative-draft-model-path|--speculative-draft-model --speculative-draft-model-revision "
           "--speculative-draft-load-format --speculative-num-steps --speculative-eagle-topk "
           "--speculative-num-draft-tokens --speculative-accept-threshold-single --speculative-accept-threshold-acc "
           "--speculative-token-map --speculative-attention-mode --speculative-moe-runner-backend "
           "--moe-a2a-backend --moe-runner-backend --flashinfer-mxfp4-moe-precision --deepep-mode "
           "--ep-num-redundant-experts --ep-dispatch-algorithm --init-expert-location --eplb-algorithm "
           "--eplb-rebalance-num-iterations --eplb-rebalance-layers-per-chunk "
           "--eplb-min-rebalancing-utilization-threshold --expert-distribution-recorder-mode "
           "--expert-distribution-recorder-buffer-size --deepep-config --moe-dense-tp-size --elastic-ep-backend "
           "--mooncake-ib-device --hicache-ratio --hicache-size --hicache-write-policy --hicache-io-backend "
           "--hicache-mem-layout --hicache-storage-backend --hicache-storage-prefetch-policy "
           "--hicache-storage-backend-extra-config --ds-channel-config-path --ds-heavy-channel-num "
           "--ds-heavy-token-num --ds-heavy-channel-type --ds-sparse-decode-threshold --offload-group-size "
           "--offload-num-in-group --offload-prefetch-step --offload-mode --multi-item-scoring-delimiter "
           "--cuda-graph-max-bs --tbo-token-distribution-threshold --piecewise-cuda-graph-tokens "
           "--piecewise-cuda-graph-compiler --torch-compile-max-bs --piecewise-cuda-graph-max-tokens "
           "--triton-attention-num-kv-splits --triton-attention-split-tile-size --num-continuous-decode-steps "
           "--scheduler-recv-interval --rl-on-policy-target --dynamic-batch-tokenizer-batch-size "
           "--dynamic-batch-tokenizer-batch-timeout --debug-tensor-dump-output-folder --debug-tensor-dump-input-file "
           "--debug-tensor-dump-inject --disaggregation-mode --disaggregation-transfer-backend "
           "--disaggregation-bootstrap-port --disaggregation-decode-tp --disaggregation-decode-dp "
           "--disaggregation-prefill-pp --disaggregation-ib-device --num-reserved-decode-tokens "
           "--disaggregation-decode-polling-interval --remote-instance-weight-loader-seed-instance-ip "
           "--remote-instance-weight-loader-seed-instance-service-port "
           "--remote-instance-weight-loader-send-weights-group-ports --pdmux-config-path --sm-group-num "
           "--mm-max-concurrent-calls --mm-per-request-timeout --decrypted-config-file --decrypted-draft-config-file "
           "--kt-amx-weight-path --kt-amx-method --kt-cpuinfer --kt-threadpool-count --kt-num-gpu-experts "
           "--kt-max-deferred-experts-per-token"},
          {Kind::ignored, Arity::many,
           "--tokenizer-metrics-allowed-custom-labels --bucket-time-to-first-token --bucket-inter-token-latency "
           "--bucket-e2e-request-latency --prompt-tokens-buckets --generation-tokens-buckets --lora-target-modules "
           "--lora-paths --cuda-graph-bs --numa-node --debug-tensor-dump-layers --custom-weight-loader"},
          {Kind::ignored, Arity::optional, "--hybrid-kvcache-ratio"},
          {Kind::ignored, Arity::none,
           "--skip-tokenizer-init --trust-remote-code --is-embedding --enable-multimodal --grpc-mode "
           "--skip-server-warmup --checkpoint-engine-wait-weights-before-ready --enable-fp32-lm-head "
           "--quantize-and-serve --enable-priority-scheduling --abort-on-priority-when-disabled "
           "--schedule-low-priority-values-first --stream-output --constrained-json-disable-any-whitespace "
           "--sleep-on-idle --log-requests --show-time-cost --enable-metrics --enable-metrics-for-all-schedulers "
           "--collect-tokens-histogram --enable-request-time-stats-logging --enable-trace --enable-cache-report "
           "--prefill-round-robin-balance --enable-flashinfer-allreduce-fusion --enable-eplb "
           "--enable-expert-distribution-metrics --enable-hierarchical-cache --enable-lmcache "
           "--enable-double-sparsity --disable-radix-cache --disable-cuda-graph-padding --enable-profile-cuda-graph "
           "--enable-cudagraph-gc --enable-nccl-nvls --enable-symm-mem --disable-flashinfer-cutlass-moe-fp4-allgather "
           "--enable-tokenizer-batch-encode --disable-tokenizer-batch-decode --disable-outlines-disk-cache "
           "--disable-custom-all-reduce --enable-mscclpp --enable-torch-symm-mem --disable-overlap-schedule "
           "--enable-mixed-chunk --enable-dp-lm-head --enable-two-batch-overlap --enable-single-batch-overlap "
           "--enable-torch-compile --enable-piecewise-cuda-graph --enable-nan-detection --enable-p2p-check "
           "--triton-attention-reduce-in-fp32 --delete-ckpt-after-loading --enable-memory-saver "
           "--enable-weights-cpu-backup --allow-auto-truncate --enable-custom-logit-processor "
           "--flashinfer-mla-disable-ragged --disable-shared-experts-fusion --disable-chunked-prefix-cache "
           "--disable-fast-image-processor --keep-mm-feature-on-device --enable-return-hidden-states "
           "--enable-deterministic-inference --enable-dynamic-batch-tokenizer "
           "--disaggregation-decode-enable-offload-kvcache --weight-loader-disable-mmap --enable-pdmux"},
          {Kind::unmodelled, Arity::one,
           "--cpu-offload-gb --speculative-algorithm --swa-full-tokens-ratio --max-mamba-cache-size "
           "--mamba-ssm-dtype --mamba-full-memory-ratio --torchao-config --modelopt-quant "
           "--modelopt-checkpoint-restore-path --modelopt-checkpoint-save-path --modelopt-export-path"},
          {Kind::unmodelled, Arity::none, "--enable-lora --enable-dp-attention --disable-hybrid-swa-memory"},
          {Kind::removed, Arity::none,
           "--enable-ep-moe --enable-deepep-moe --enable-flashinfer-mla --enable-flashmla --disable-mla "
           "--enable-flashinfer-moe --enable-flashinfer-cutlass-moe --enable-flashinfer-trtllm-moe "
           "--enable-triton-kernel-moe"},
          {Kind::config_file, Arity::one, "--config"},
      });
  return e;
}

const EngineSpec& trtllm_spec() {
  static const EngineSpec e = build(
      {"trtllm", "TensorRT-LLM", false, true, "trtllm-serve takes one positional argument, the model", {}, {}},
      {
          to("--tensor_parallel_size|--tp_size", "--tensor-parallel-size"),
          to("--pipeline_parallel_size|--pp_size", "--pipeline-parallel-size"),
          to("--moe_expert_parallel_size|--ep_size", "--expert-parallel-size"),
          to("--max_batch_size", "--max-num-seqs"),
          to("--max_num_tokens", "--max-num-batched-tokens"),
          to("--max_seq_len", "--max-model-len"),
          to("--kv_cache_free_gpu_memory_fraction|--free_gpu_memory_fraction", "--kv-cache-free-gpu-mem-fraction"),
      },
      {
          {Kind::ignored, Arity::one,
           "--tokenizer --custom_tokenizer --host --port --backend --custom_module_dirs --log_level --gpus_per_node "
           "--num_postprocess_workers --revision --reasoning_parser --tool_parser --metadata_server_config_file "
           "--server_role --otlp_traces_endpoint --disagg_cluster_uri --media_io_kwargs --chat_template"},
          {Kind::ignored, Arity::none, "--trust_remote_code --fail_fast_on_attention_window_too_large --enable_chunked_prefill"},
          {Kind::unmodelled, Arity::one,
           "--max_beam_width --context_parallel_size|--cp_size --moe_cluster_parallel_size|--cluster_size"},
          {Kind::config_file, Arity::one, "--config|--extra_llm_api_options"},
      });
  return e;
}

const EngineSpec& llamacpp_spec() {
  static const EngineSpec e = build(
      {"llama.cpp", "llama.cpp", false, false, "llama-server takes the model as -m/--model", {}, {}},
      {
          model("--model|-m"),
          model("--hf-repo|-hf|-hfr"),
          model("--model-url|-mu"),
          model("--docker-repo|-dr"),
          to("--ctx-size|-c", "--ctx-size"),
          to("--parallel|-np", "--parallel", Conv::auto_count),
          to("--cache-type-k|-ctk", "--cache-type-k"),
          to("--cache-type-v|-ctv", "--cache-type-v"),
          to("--n-gpu-layers|--gpu-layers|-ngl", "--n-gpu-layers", Conv::gpu_layers),
          to("--ubatch-size|-ub", "--ubatch-size"),
          on("--swa-full", "--swa-full"),
          on("--kv-unified|-kvu", "--no-kv-unified", Conv::boolean_inverted),
          on("--no-kv-unified|-no-kvu", "--no-kv-unified"),
      },
      {
          {Kind::ignored, Arity::one,
           "--threads|-t --threads-batch|-tb --cpu-mask|-C --cpu-range|-Cr --cpu-strict --prio --poll "
           "--cpu-mask-batch|-Cb --cpu-range-batch|-Crb --cpu-strict-batch --prio-batch --poll-batch "
           "--n-predict|--predict|-n --batch-size|-b --keep --rope-scaling --rope-scale --rope-freq-base "
           "--rope-freq-scale --yarn-orig-ctx --yarn-ext-factor --yarn-attn-factor --yarn-beta-slow --yarn-beta-fast "
           "--rpc --load-mode|-lm --lazy-mode|-lzm --numa --device|-dev --fit-target|-fitt --fit-ctx|-fitc "
           "--override-kv --control-vector --control-vector-scaled --hf-file|-hff --hf-token|-hft --log-file "
           "--verbosity|--log-verbosity|-lv --samplers --seed|-s --sampling-seq|--sampler-seq "
           "--temp|--temperature --top-k --top-p --min-p --top-n-sigma|--top-nsigma --xtc-probability "
           "--xtc-threshold --typical|--typical-p --repeat-last-n --repeat-penalty --presence-penalty "
           "--frequency-penalty --dry-multiplier --dry-base --dry-allowed-length --dry-penalty-last-n "
           "--dry-sequence-breaker --adaptive-target --adaptive-decay --dynatemp-range --dynatemp-exp --mirostat "
           "--mirostat-lr --mirostat-ent --logit-bias|-l --grammar --grammar-file --json-schema|-j "
           "--json-schema-file|-jf --lookup-cache-static|-lcs --lookup-cache-dynamic|-lcd "
           "--ctx-checkpoints|--swa-checkpoints|-ctxcp --checkpoint-min-step|-cms --cache-ram|-cram "
           "--reverse-prompt|-r --pooling --mmproj-device|-mmdev --image-min-tokens --image-max-tokens "
           "--mtmd-batch-max-tokens --video-fps --video-timestamp-interval --video-ffmpeg-dir --alias|-a --tags "
           "--embd-normalize --host --port --path --cors-origins --cors-methods --cors-headers --api-prefix "
           "--ui-config|--webui-config --ui-config-file|--webui-config-file --tools --tools-runtime "
           "--mcp-servers-config --mcp-servers-json --api-key --api-key-file --ssl-key-file --ssl-cert-file "
           "--chat-template-kwargs --timeout|-to --sse-ping-interval --threads-http --cache-reuse --slot-save-path "
           "--media-path --models-dir --models-preset --models-max --reasoning-format --reasoning-effort "
           "--reasoning-budget --reasoning-budget-message --chat-template --chat-template-file "
           "--slot-prompt-similarity|-sps --sleep-idle-seconds --log-prompts-dir "
           "--spec-draft-threads|--threads-draft|-td --spec-draft-threads-batch|--threads-batch-draft|-tbd "
           "--spec-draft-n-max --spec-draft-n-min --spec-draft-p-min|--draft-p-min "
           "--spec-draft-p-split|--draft-p-split --spec-draft-sampling --spec-type "
           "--spec-draft-device|--device-draft|-devd --spec-draft-type-k|--cache-type-k-draft|-ctkd "
           "--spec-draft-type-v|--cache-type-v-draft|-ctvd --lora-scaled --grp-attn-n|-gan --grp-attn-w|-gaw"},
          {Kind::ignored, Arity::many, "--control-vector-layer-range"},
          {Kind::ignored, Arity::optional, "--flash-attn|-fa --fit|-fit --log-colors --reasoning|-rea"},
          {Kind::ignored, Arity::none,
           "--perf --no-perf --escape|-e --no-escape --kv-offload|-kvo --repack --no-repack|-nr --no-host "
           "--list-devices --check-tensors --op-offload --no-op-offload --lora-init-without-apply --log-disable "
           "--log-jsonl --no-log-jsonl --verbose|--log-verbose|-v --offline --log-prefix --no-log-prefix "
           "--log-timestamps --no-log-timestamps --ignore-eos --backend-sampling|-bs --cache-idle-slots "
           "--no-cache-idle-slots --context-shift --no-context-shift --special|-sp --warmup --no-warmup --spm-infill "
           "--cont-batching|-cb --no-cont-batching|-nocb --mmproj-auto --no-mmproj --no-mmproj-auto --mmproj-offload "
           "--no-mmproj-offload --reuse-port --cors-credentials --no-cors-credentials --ui|--webui --no-ui|--no-webui "
           "--agent|-ag --no-agent|-no-ag --ui-mcp-proxy|--webui-mcp-proxy --no-ui-mcp-proxy|--no-webui-mcp-proxy "
           "--embedding|--embeddings --rerank|--reranking --cache-prompt --no-cache-prompt --metrics --props --slots "
           "--no-slots --models-autoload --no-models-autoload --jinja --no-jinja --skip-chat-parsing "
           "--no-skip-chat-parsing --prefill-assistant --no-prefill-assistant --mlock --mmap --no-mmap "
           "--spec-draft-backend-sampling --no-spec-draft-backend-sampling --spec-default"},
          {Kind::unmodelled, Arity::one,
           "--override-tensor|-ot --n-cpu-moe|-ncmoe --n-cpu-ffn|-ncffn --moe-cache-mib --split-mode|-sm "
           "--tensor-split|-ts --main-gpu|-mg --lora --mmproj|-mm --mmproj-url|-mmu --kv-unified-per-slot "
           "--spec-draft-model|--model-draft|-md --spec-draft-hf|--hf-repo-draft|-hfd|-hfrd "
           "--spec-draft-ngl|--gpu-layers-draft|--n-gpu-layers-draft|-ngld "
           "--spec-draft-override-tensor|--override-tensor-draft|-otd "
           "--spec-draft-n-cpu-moe|--spec-draft-ncmoe|--n-cpu-moe-draft|-ncmoed"},
          {Kind::unmodelled, Arity::none, "--no-kv-offload|-nkvo --cpu-moe|-cmoe --spec-draft-cpu-moe|--cpu-moe-draft|-cmoed"},
          {Kind::removed, Arity::one, "--defrag-thold|-dt --draft|--draft-n|--draft-max --draft-min|--draft-n-min"},
          {Kind::removed, Arity::none, "--penalize-nl --no-penalize-nl"},
      });
  return e;
}

const EngineSpec& spec_for(const std::string& engine) {
  if (engine == "vllm") return vllm_spec();
  if (engine == "sglang") return sglang_spec();
  if (engine == "trtllm") return trtllm_spec();
  return llamacpp_spec();
}

// ---------------------------------------------------------------------------------------------------
// Finding the command
// ---------------------------------------------------------------------------------------------------

bool is_flag(const std::string& w) {  // "-1" and "-" are values, not flags
  return w.size() > 1 && w[0] == '-' && !std::isdigit(static_cast<unsigned char>(w[1])) && w[1] != '.';
}

bool is_control(const std::string& w) {
  return w == "|" || w == "||" || w == "&" || w == "&&" || w == ";" || w == ";;" || w == "|&";
}

bool is_redirect(const std::string& w) {
  const std::size_t d = w.find_first_not_of("0123456789");
  if (d == std::string::npos) return false;
  const std::string_view op = std::string_view(w).substr(d);
  for (std::string_view o : kOperators)
    if (op == o) return o[0] == '<' || o[0] == '>' || (o[0] == '&' && o.size() > 1 && o[1] == '>');
  return false;
}

// Splits the words at control operators (|, &&, ;, & ...) and drops redirections with their targets.
std::vector<std::vector<std::string>> simple_commands(const std::vector<std::string>& argv) {
  std::vector<std::vector<std::string>> out(1);
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (is_control(argv[i])) {
      if (!out.back().empty()) out.emplace_back();
    } else if (is_redirect(argv[i])) {
      ++i;
    } else {
      out.back().push_back(argv[i]);
    }
  }
  if (out.back().empty()) out.pop_back();
  return out;
}

std::string basename(const std::string& w) {
  const std::size_t slash = w.find_last_of("/\\");
  return slash == std::string::npos ? w : w.substr(slash + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_assignment(const std::string& w) {  // NAME=value before a command
  const std::size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  if (!std::isalpha(static_cast<unsigned char>(w[0])) && w[0] != '_') return false;
  return std::all_of(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool is_python(const std::string& w) {
  const std::string b = basename(w);
  if (b.rfind("python", 0) != 0) return false;
  const std::string v = b.substr(6);
  return std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; });
}

// The first unexpanded variable in s ($VAR, ${VAR}, $(cmd), `cmd`, %VAR%, {{ helm }}), or "".
std::string unexpanded(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const char n = i + 1 < s.size() ? s[i + 1] : '\0';
    if (c == '$' && (n == '{' || n == '(')) {
      const char close = n == '{' ? '}' : ')';
      int depth = 0;
      for (std::size_t j = i + 1; j < s.size(); ++j) {
        if (s[j] == n) ++depth;
        if (s[j] == close && --depth == 0) return s.substr(i, j - i + 1);
      }
      return s.substr(i);
    }
    if (c == '$' && (std::isalnum(static_cast<unsigned char>(n)) || n == '_' || n == '@' || n == '*')) {
      std::size_t j = i + 1;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      return s.substr(i, std::max(j, i + 2) - i);
    }
    if (c == '`') return s.substr(i);
    if (c == '{' && n == '{') return s.substr(i, std::min(s.find("}}", i), s.size() - 2) + 2 - i);
    if (c == '%') {
      const std::size_t j = s.find('%', i + 1);
      if (j != std::string::npos && j > i + 1 &&
          std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i + 1), s.begin() + static_cast<std::ptrdiff_t>(j),
                      [](unsigned char ch) { return std::isalnum(ch) || ch == '_'; }))
        return s.substr(i, j - i + 1);
    }
  }
  return "";
}

bool is_variable(const std::string& w) { return !w.empty() && unexpanded(w) == w; }

struct Entry {
  const EngineSpec* spec = nullptr;
  std::size_t begin = 0;       // the entry point's first word
  std::size_t args = 0;        // its first argument
  bool wrapper = false;        // ${LLAMA_SERVER}-style stand-in for llama-server
};

// Whether cmd[i] begins an entry point kvplan reads.
std::optional<Entry> entry_at(const std::vector<std::string>& cmd, std::size_t i, const std::string& where) {
  const std::string& w = cmd[i];
  const std::string b = basename(w);
  const std::string next = i + 1 < cmd.size() ? cmd[i + 1] : "";
  if (b == "vllm" && next == "serve") return Entry{&vllm_spec(), i, i + 2, false};
  if (b == "sglang" && next == "serve") return Entry{&sglang_spec(), i, i + 2, false};
  if (is_python(w)) {
    std::size_t m = i + 1;  // past interpreter options: python3 -u -X dev -m ...
    while (m < cmd.size() && is_flag(cmd[m]) && cmd[m] != "-m") m += cmd[m] == "-X" || cmd[m] == "-W" ? 2 : 1;
    const std::string module = m + 1 < cmd.size() && cmd[m] == "-m" ? cmd[m + 1] : "";
    if (module == "vllm.entrypoints.openai.api_server" || module == "vllm.entrypoints.api_server")
      return Entry{&vllm_spec(), i, m + 2, false};
    if (module == "vllm.entrypoints.cli.main" && m + 2 < cmd.size() && cmd[m + 2] == "serve")
      return Entry{&vllm_spec(), i, m + 3, false};
    if (module == "sglang.launch_server") return Entry{&sglang_spec(), i, m + 2, false};
  }
  const std::string lw = lower(w);
  if (ends_with(lw, "llama-server") || ends_with(lw, "llama-server.exe")) return Entry{&llamacpp_spec(), i, i + 1, false};
  if (b == "trtllm-serve") {
    if (next == "serve") return Entry{&trtllm_spec(), i, i + 2, false};
    if (next == "disaggregated" || next == "disaggregated_mpi_worker" || next == "mm_embedding_serve" || next == "grpc")
      throw InputError(where, "trtllm-serve " + next + " is not supported",
                       "give the trtllm-serve serve MODEL command of each server");
    return Entry{&trtllm_spec(), i, i + 1, false};
  }
  return std::nullopt;
}

bool is_container_run(const std::vector<std::string>& cmd, std::size_t i) {
  static const char* runtimes[] = {"docker", "podman", "nerdctl", "singularity", "apptainer"};
  const std::string b = basename(cmd[i]);
  const bool runtime = std::any_of(std::begin(runtimes), std::end(runtimes), [&](const char* r) { return b == r; });
  const std::string next = i + 1 < cmd.size() ? cmd[i + 1] : "";
  return runtime && (next == "run" || next == "exec" || next == "container" || next == "compose");
}

[[noreturn]] void container_error(const std::vector<std::string>& cmd, std::size_t i, const std::string& where) {
  throw InputError(where, "'" + basename(cmd[i]) + " " + cmd[i + 1] + "' command lines are not supported",
                   "give the command the container runs (for an image whose entry point is the engine, the "
                   "arguments after the image name, with the engine named)");
}

std::string join(const std::vector<std::string>& words, std::size_t begin, std::size_t end, std::size_t max = 1000) {
  std::string s;
  for (std::size_t i = begin; i < end && i < begin + max; ++i) s += (i > begin ? " " : "") + words[i];
  if (end > begin + max) s += " ...";
  return s;
}

// ---------------------------------------------------------------------------------------------------
// Flags
// ---------------------------------------------------------------------------------------------------

std::optional<bool> parse_bool(std::string v) {
  v = lower(v);
  if (v == "true" || v == "1" || v == "yes" || v == "on") return true;
  if (v == "false" || v == "0" || v == "no" || v == "off") return false;
  return std::nullopt;
}

bool is_number(const std::string& v) {
  if (v.empty()) return false;
  char* end = nullptr;
  std::strtod(v.c_str(), &end);
  return end == v.c_str() + v.size();
}

bool looks_like_value(const std::string& v) {  // for flags whose value is optional (-fa [on|off|auto])
  const std::string l = lower(v);
  return l == "on" || l == "off" || l == "auto" || l == "enabled" || l == "disabled" || parse_bool(l) || is_number(l);
}

// vLLM's human_readable_int: 25.6k = 25600 (k m g t: powers of 1000), 16K = 16384 (K M G T: of 1024).
// Anything else is returned as written for kvplan to judge.
std::string vllm_int(const std::string& v) {
  if (v.size() < 2) return v;
  const char suffix = v.back();
  const std::string number = v.substr(0, v.size() - 1);
  const std::string_view lowers = "kmgt", uppers = "KMGT";
  const std::size_t power = std::min(lowers.find(suffix), uppers.find(suffix));
  if (power == std::string_view::npos || number.empty() || !is_number(number) || number[0] == '-' || number[0] == '+')
    return v;
  try {
    if (lowers.find(suffix) != std::string_view::npos) {
      i64 scale = 1;
      for (std::size_t p = 0; p <= power; ++p) scale *= 1000;
      const double x = std::stod(number) * static_cast<double>(scale);
      if (!(x < 9.2e18)) return v;
      return std::to_string(static_cast<i64>(x));
    }
    if (number.find_first_not_of("0123456789") != std::string::npos) return v;  // 1.5K: vLLM refuses it too
    return std::to_string(mul(std::stoll(number), i64{1} << (10 * (power + 1)), "vLLM integer"));
  } catch (const std::exception&) {
    return v;
  }
}

class Reader {
 public:
  Reader(const EngineSpec& e, const std::string& where) : e_(e), where_(where) { cmd_.engine = e.name; }

  EngineCommand read(const std::vector<std::string>& args) {
    for (std::size_t i = 0; i < args.size(); ++i) {
      const std::string& tok = args[i];
      if (tok == "--") {
        for (++i; i < args.size(); ++i) positional(args[i]);
        break;
      }
      if (!is_flag(tok)) {
        if (entry_at(args, i, where_)) {  // a second command, run together with this one (newlines are spaces)
          more_commands_ = true;
          break;
        }
        positional(tok);
        continue;
      }
      const bool long_flag = tok.rfind("--", 0) == 0;
      const std::size_t eq = tok.find('=');
      std::string written = eq == std::string::npos ? tok : tok.substr(0, eq);
      std::optional<std::string> inline_value;
      if (eq != std::string::npos) inline_value = tok.substr(eq + 1);
      Match m = resolve(written, long_flag);
      if (m.attached) inline_value = m.attached;
      const Flag& f = e_.flag(m.at);
      std::string value;
      switch (f.arity) {
        case Arity::none: {
          bool b = true;
          if (inline_value) {
            const auto parsed = parse_bool(*inline_value);
            if (!parsed)
              throw InputError(where_, e_.name + " flag '" + written + "' takes true or false, not '" + *inline_value + "'");
            b = *parsed;
          }
          value = (b != m.negated) ? "true" : "false";
          break;
        }
        case Arity::one:
          if (inline_value) {
            value = *inline_value;
          } else if (i + 1 < args.size()) {
            value = args[++i];
          }
          if (value.empty())
            throw InputError(where_, e_.name + " flag '" + written + "' needs a value", "write " + written + " VALUE");
          break;
        case Arity::optional:
          if (inline_value) value = *inline_value;
          else if (i + 1 < args.size() && looks_like_value(args[i + 1])) value = args[++i];
          break;
        case Arity::many:
          if (inline_value) value = *inline_value;
          while (i + 1 < args.size() && !is_flag(args[i + 1])) value += (value.empty() ? "" : " ") + args[++i];
          break;
      }
      apply(f, m.negated ? "--no-" + e_.spelled(m.at).substr(2) : e_.spelled(m.at), written, value);
    }
    return cmd_;
  }

  void warn(std::string message) { cmd_.warnings.push_back(std::move(message)); }
  bool more_commands() const { return more_commands_; }

 private:
  const EngineSpec& e_;
  const std::string& where_;
  EngineCommand cmd_;
  bool positional_model_seen_ = false;
  bool more_commands_ = false;

  struct Match {
    std::pair<std::size_t, std::size_t> at;
    bool negated = false;
    std::optional<std::string> attached;  // -O3: argparse's value glued to a one-letter flag
  };

  Match resolve(const std::string& written, bool long_flag) const {
    const std::string name = normalize(written);
    if (auto it = e_.index.find(name); it != e_.index.end()) return {it->second, false, std::nullopt};
    if (long_flag && name.rfind("--no-", 0) == 0) {  // argparse BooleanOptionalAction, llama.cpp --no-X
      if (auto it = e_.index.find("--" + name.substr(5)); it != e_.index.end() && e_.flag(it->second).arity == Arity::none)
        return {it->second, true, std::nullopt};
    }
    if (e_.abbreviations && long_flag && name.size() > 2) {
      std::vector<std::string> candidates;
      std::optional<std::pair<std::size_t, std::size_t>> hit;
      bool several = false;
      for (auto it = e_.index.lower_bound(name); it != e_.index.end() && it->first.rfind(name, 0) == 0; ++it) {
        candidates.push_back(it->first);
        if (hit && hit->first != it->second.first) several = true;
        if (!hit) hit = it->second;
      }
      if (hit && !several) return {*hit, false, std::nullopt};
      if (several) {
        std::string list;
        for (const auto& c : candidates) list += (list.empty() ? "" : ", ") + c;
        throw InputError(where_, "ambiguous " + e_.name + " flag '" + written + "'",
                         "it could be " + list + "; write more of the name");
      }
    }
    if (e_.abbreviations && !long_flag && name.size() > 2) {  // -O3 = -O 3
      if (auto it = e_.index.find(name.substr(0, 2)); it != e_.index.end() && e_.flag(it->second).arity == Arity::one)
        return {it->second, false, name.substr(2)};
    }
    std::vector<std::string> all, known;
    for (const auto& [key, at] : e_.index) all.push_back(key);
    for (const Flag& f : e_.flags)
      if (f.kind == Kind::setting || f.kind == Kind::model) known.push_back(f.names[0]);
    std::string list;
    for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
    const auto near = closest(name, all);
    throw InputError(where_, "unknown " + e_.name + " flag '" + written + "'",
                     (near ? "did you mean '" + e_.spelled(e_.index.at(*near)) + "'? " : std::string()) +
                         "kvplan knows: " + list);
  }

  void set(const std::string& key, const std::string& value) {
    for (auto& [k, v] : cmd_.settings)
      if (k == key) {
        v = value;
        return;
      }
    cmd_.settings.emplace_back(key, value);
  }

  void unset(const std::string& key) {
    auto& s = cmd_.settings;
    s.erase(std::remove_if(s.begin(), s.end(), [&](const auto& kv) { return kv.first == key; }), s.end());
  }

  void ignore(const std::string& name) {
    if (std::find(cmd_.ignored.begin(), cmd_.ignored.end(), name) == cmd_.ignored.end()) cmd_.ignored.push_back(name);
  }

  void set_model(const std::string& as_written, const std::string& value) {
    if (const std::string var = unexpanded(value); !var.empty())
      warn(as_written + ": unexpanded variable; kept as the model name");
    cmd_.model = value;
  }

  void positional(const std::string& word) {
    if (e_.positional_model && !positional_model_seen_) {
      positional_model_seen_ = true;
      set_model("model " + word, word);
    } else if (!unexpanded(word).empty()) {
      warn(word + ": unexpanded variable; the arguments it holds are not read");
    } else {
      throw InputError(where_, "unexpected " + e_.name + " argument '" + word + "'", e_.model_hint);
    }
  }

  void apply(const Flag& f, const std::string& name, const std::string& written, const std::string& value) {
    const std::string shown = written + (value.empty() || f.arity == Arity::none ? "" : " " + value);
    switch (f.kind) {
      case Kind::ignored:
        ignore(name);
        return;
      case Kind::removed:
        ignore(name);
        warn(written + ": removed from recent " + e_.label + " versions; ignored");
        return;
      case Kind::unmodelled:
        ignore(name);
        warn(written + ": changes GPU memory in a way kvplan does not model; ignored");
        return;
      case Kind::config_file:
        ignore(name);
        warn(shown + ": settings in that file are not read");
        return;
      case Kind::model:
        set_model(shown, value);
        return;
      case Kind::setting:
        break;
    }
    if (!unexpanded(value).empty()) {
      warn(shown + ": unexpanded variable; setting skipped");
      return;
    }
    const std::string l = lower(value);
    switch (f.conv) {
      case Conv::plain:
        set(f.setting, value);
        return;
      case Conv::boolean:
      case Conv::boolean_inverted:
        if ((value == "true") != (f.conv == Conv::boolean_inverted)) set(f.setting, "true");
        else unset(f.setting);
        return;
      case Conv::human_int:
        if (l == "auto" || l == "-1") break;
        set(f.setting, vllm_int(value));
        return;
      case Conv::gpu_layers:
        if (l == "auto") break;
        set(f.setting, l == "all" ? "-1" : value);
        return;
      case Conv::auto_count:
        if (l == "auto" || l == "-1") break;
        set(f.setting, value);
        return;
      case Conv::quantization:
        if (l == "fp8") {
          set(f.setting, "fp8");
        } else if (l == "awq" || l == "awq_marlin" || l == "gptq" || l == "gptq_marlin") {
          set(f.setting, "int4");
        } else if (l != "none") {
          ignore(name);
          warn(shown + ": not modelled; weights are sized from the model's config");
        }
        return;
    }
    warn(shown + ": no fixed value; kvplan uses its own default");
  }
};

}  // namespace

EngineCommand parse_engine_command(const std::vector<std::string>& argv, const std::string& engine_hint,
                                   const std::string& where) {
  std::string hint;
  if (const auto k = parse_engine(engine_hint); k && *k != EngineKind::generic) hint = engine_name(*k);

  const auto commands = simple_commands(argv);
  if (commands.empty())
    throw InputError(where, "empty command line", "give the engine's command, e.g. vllm serve MODEL --max-model-len 8192");

  // The first command that runs an engine; words before its entry point in the same command are
  // variable assignments, env/nohup/exec, or (in a pasted script) other lines.
  std::optional<Entry> entry;
  std::size_t chosen = 0, engine_commands = 0;
  for (std::size_t c = 0; c < commands.size(); ++c) {
    const auto& cmd = commands[c];
    std::optional<Entry> found;
    for (std::size_t w = 0; w < cmd.size() && !found; ++w) {
      if (is_container_run(cmd, w)) {
        if (!entry) container_error(cmd, w, where);
        break;
      }
      found = entry_at(cmd, w, where);
    }
    if (!found && hint == "llama.cpp" && is_variable(cmd[0])) found = Entry{&llamacpp_spec(), 0, 1, true};
    if (!found) continue;
    ++engine_commands;
    if (!entry) {
      entry = found;
      chosen = c;
    }
  }

  if (!entry) {
    const auto& cmd = commands[0];
    std::size_t first = 0;
    while (first < cmd.size() && is_assignment(cmd[first])) ++first;
    const bool bare = !hint.empty() && first < cmd.size() &&
                      (is_flag(cmd[first]) || is_variable(cmd[first]) || spec_for(hint).positional_model);
    if (!bare)
      throw InputError(where, "unsupported entry point '" + (first < cmd.size() ? cmd[first] : cmd[0]) + "'",
                       "kvplan reads vllm serve, python -m vllm.entrypoints.openai.api_server, python -m "
                       "sglang.launch_server, sglang serve, llama-server and trtllm-serve command lines, or "
                       "an engine's bare arguments when the engine is named");
    entry = Entry{&spec_for(hint), first, first, false};
  }

  const auto& cmd = commands[chosen];
  const EngineSpec& spec = *entry->spec;
  if (!hint.empty() && spec.name != hint)
    throw InputError(where, "the command runs " + spec.name + " (" + join(cmd, entry->begin, entry->args) + "), not " + hint,
                     "name the engine " + spec.name + " or give a " + hint + " command");

  Reader reader(spec, where);
  std::vector<std::string> skipped;
  for (std::size_t w = 0; w < entry->begin; ++w) {
    static const char* prefixes[] = {"env", "exec", "nohup", "time", "command"};
    const bool quiet = is_assignment(cmd[w]) ||
                       std::any_of(std::begin(prefixes), std::end(prefixes), [&](const char* p) { return cmd[w] == p; });
    if (!quiet) skipped.push_back(cmd[w]);
  }
  if (!skipped.empty())
    reader.warn("ignored what comes before '" + join(cmd, entry->begin, entry->args) + "': " + join(skipped, 0, skipped.size(), 6));
  if (entry->wrapper) reader.warn(cmd[entry->begin] + ": unexpanded variable; taken as llama-server");
  EngineCommand out = reader.read(std::vector<std::string>(cmd.begin() + static_cast<std::ptrdiff_t>(entry->args), cmd.end()));
  if (engine_commands > 1 || reader.more_commands())
    out.warnings.push_back("kvplan reads the first of several engine commands (" + join(cmd, entry->begin, entry->args) + ")");
  return out;
}

}  // namespace kvplan::io
