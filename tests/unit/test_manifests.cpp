// Kubernetes manifests, Helm values and compose files -> engine containers: argv with $(VAR)
// expanded as the kubelet does, GPU counts and products with their locations, for real shapes in
// tests/data/manifests (each file names the public manifest it is modelled on), and the errors.
#include <catch2/catch.hpp>

#include "kvplan/io/manifests.hpp"

using namespace kvplan;
using Words = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

namespace {

std::string path(const std::string& file) { return std::string(KVPLAN_TEST_DATA) + "/manifests/" + file; }

// "file:line:col" of a test data file, written out by hand from the file's text.
std::string loc(const std::string& file, int line, int col) {
  return path(file) + ":" + std::to_string(line) + ":" + std::to_string(col);
}

std::vector<io::ManifestDeployment> read(const std::string& file) {
  return io::read_manifests(io::load_documents(path(file), true));
}

std::vector<io::ManifestDeployment> read_text(const std::string& text) {
  return io::read_manifests(io::parse_documents(text, "t.yaml", true, true));
}

std::string error_of(const std::string& text) {
  try {
    read_text(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const std::string pod_head = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n";

}  // namespace

TEST_CASE("$(VAR) expansion follows the kubelet", "[manifests]") {
  const Env vars{{"A", "x"}, {"MODEL", "org/m"}};
  CHECK(io::expand_kube_vars("$(A)", vars) == "x");
  CHECK(io::expand_kube_vars("--model=$(MODEL)", vars) == "--model=org/m");
  CHECK(io::expand_kube_vars("$(A)$(A)-$(A)", vars) == "xx-x");
  CHECK(io::expand_kube_vars("$$(A)", vars) == "$(A)");  // escaped reference
  CHECK(io::expand_kube_vars("$$$(A)", vars) == "$x");   // escaped $, then a reference
  CHECK(io::expand_kube_vars("$$", vars) == "$");
  CHECK(io::expand_kube_vars("$(B)", vars) == "$(B)");              // undefined: as written
  CHECK(io::expand_kube_vars("$(A", vars) == "$(A");                // unterminated: as written
  CHECK(io::expand_kube_vars("$A ${A} a$", vars) == "$A ${A} a$");  // shell syntax is not the kubelet's
  CHECK(io::expand_kube_vars("", vars).empty());
}

TEST_CASE("engine from the image name", "[manifests]") {
  CHECK(io::engine_from_image("vllm/vllm-openai:v0.11.0") == "vllm");
  CHECK(io::engine_from_image("docker.io/vllm/vllm-openai@sha256:abc") == "vllm");
  CHECK(io::engine_from_image("lmcache/vllm-openai:latest") == "vllm");
  CHECK(io::engine_from_image("rocm/vllm:latest") == "vllm");
  CHECK(io::engine_from_image(
            "us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:20250312") == "vllm");
  CHECK(io::engine_from_image("lmsysorg/sglang:v0.4.9-cu126") == "sglang");
  CHECK(io::engine_from_image("ghcr.io/ggml-org/llama.cpp:server-cuda") == "llama.cpp");
  CHECK(io::engine_from_image("ghcr.io/ggerganov/llama.cpp:server-cuda-b4068") == "llama.cpp");
  CHECK(io::engine_from_image("myrepo/llama-server:cuda12") == "llama.cpp");
  CHECK(io::engine_from_image("nvcr.io/nvidia/tensorrt-llm/release:1.0.0") == "trtllm");
  CHECK(io::engine_from_image("nvcr.io/nvidia/tritonserver:24.08-trtllm-python-py3") == "trtllm");
  CHECK(io::engine_from_image("nvcr.io/nvidia/tritonserver:24.08-py3").empty());
  CHECK(io::engine_from_image("nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0") == "vllm");
  CHECK(io::engine_from_image("nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.4.0") == "sglang");
  CHECK(io::engine_from_image("nvcr.io/nvidia/ai-dynamo/tensorrtllm-runtime:0.4.0") == "trtllm");
  CHECK(io::engine_from_image("registry.local:5000/nginx:1.27").empty());  // a registry port is no tag
  CHECK(io::engine_from_image("").empty());
}

TEST_CASE("document kinds", "[manifests]") {
  auto kind = [](const std::string& text) {
    return io::classify_document(io::parse_documents(text, "t.yaml", true, false)[0]);
  };
  CHECK(kind("apiVersion: v1\nkind: Pod\n") == io::DocKind::kubernetes);
  CHECK(kind("servingEngineSpec:\n  modelSpec: []\n") == io::DocKind::helm_values);
  CHECK(kind("services:\n  a:\n    image: x\n") == io::DocKind::compose);
  CHECK(kind("model: llama-3.1-8b\n") == io::DocKind::deployment_file);
  CHECK(kind("- a\n") == io::DocKind::unknown);
}

TEST_CASE("GKE vLLM Deployment: $(MODEL_ID) from env, GPUs, gke-accelerator", "[manifests]") {
  const std::string f = "gke-vllm-deployment.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 1);  // the init container is skipped
  const auto& d = ds[0];
  CHECK(d.name == "Deployment/vllm-gemma-deployment");
  CHECK(d.kind == "Deployment");
  CHECK(d.where == loc(f, 26, 9));
  CHECK(d.argv ==
        Words{"python3", "-m", "vllm.entrypoints.openai.api_server", "--model=google/gemma-3-27b-it",
              "--tensor-parallel-size=4", "--max-model-len=32768",
              "--served-model-name=google/gemma-3-27b-it-chat",  // SERVED_NAME: $(MODEL_ID)-chat, expanded in order
              "--port=$(PORT)",                                  // PORT is not defined: left as written
              "--download-dir=$(HOME)/models"});                 // $$(HOME) escapes the reference
  CHECK(d.argv_where == loc(f, 39, 18));
  CHECK_FALSE(d.args_only);
  CHECK(d.env == Env{{"MODEL_ID", "google/gemma-3-27b-it"},
                     {"MAX_LEN", "32768"},
                     {"SERVED_NAME", "google/gemma-3-27b-it-chat"}});
  CHECK(d.env_from_secret == Words{"configMapRef/vllm-tuning", "HUGGING_FACE_HUB_TOKEN"});
  CHECK(d.image ==
        "us-docker.pkg.dev/vertex-ai/vertex-vision-model-garden-dockers/pytorch-vllm-serve:20250312_0916_RC01");
  CHECK(d.engine_hint == "vllm");
  CHECK(d.model.empty());
  REQUIRE(d.gpu_count);
  CHECK(*d.gpu_count == 4);
  CHECK(d.gpu_count_where == loc(f, 38, 29));  // limits, not requests (line 33)
  CHECK(d.mig_profile.empty());
  CHECK(d.gpu_product == "nvidia-l4");
  CHECK(d.gpu_product_where == loc(f, 70, 43));
  CHECK_FALSE(d.pods_per_group);
}

TEST_CASE("SGLang LeaderWorkerSet: leader command, group size, GPUs per pod", "[manifests]") {
  const std::string f = "sglang-lws.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 1);  // the leader only; the Service is skipped
  const auto& d = ds[0];
  CHECK(d.name == "LeaderWorkerSet/sglang-deepseek");
  CHECK(d.kind == "LeaderWorkerSet");
  CHECK(d.where == loc(f, 22, 13));
  // The LWS webhook adds LWS_GROUP_SIZE (= size, 2) and LWS_WORKER_INDEX (0 on the leader) to the
  // container env, so the kubelet expands them; LWS_LEADER_ADDRESS is a pod DNS name: left as written.
  CHECK(d.argv == Words{"python3", "-m", "sglang.launch_server", "--model-path", "deepseek-ai/DeepSeek-V3", "--tp",
                        "16", "--dist-init-addr", "$(LWS_LEADER_ADDRESS):20000", "--nnodes", "2", "--node-rank", "0",
                        "--trust-remote-code", "--host", "0.0.0.0", "--port", "40000"});
  CHECK(d.argv_where == loc(f, 28, 15));
  CHECK(d.env == Env{{"HF_TOKEN", "$HF_TOKEN"}, {"LWS_GROUP_SIZE", "2"}, {"LWS_WORKER_INDEX", "0"}});
  CHECK(d.engine_hint == "sglang");
  REQUIRE(d.pods_per_group);
  CHECK(*d.pods_per_group == 2);
  REQUIRE(d.gpu_count);
  CHECK(*d.gpu_count == 8);  // per pod
  CHECK(d.gpu_count_where == loc(f, 48, 33));
  CHECK(d.gpu_product == "NVIDIA-H100-80GB-HBM3");
  CHECK(d.gpu_product_where == loc(f, 20, 35));
}

TEST_CASE("LeaderWorkerSet without a leader template runs the worker template", "[manifests]") {
  const auto ds = read_text(R"(apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata:
  name: vllm
spec:
  leaderWorkerTemplate:
    workerTemplate:
      spec:
        containers:
        - name: vllm
          image: vllm/vllm-openai:v0.10.1
          command: ["vllm", "serve", "Qwen/Qwen3-8B"]
          resources:
            limits:
              nvidia.com/gpu: "1"
)");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].argv == Words{"vllm", "serve", "Qwen/Qwen3-8B"});
  REQUIRE(ds[0].pods_per_group);
  CHECK(*ds[0].pods_per_group == 1);  // size defaults to 1
}

TEST_CASE("KServe InferenceService and ServingRuntime", "[manifests]") {
  const std::string f = "kserve-vllm.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 3);

  const auto& hf = ds[0];
  CHECK(hf.name == "InferenceService/huggingface-llama3");
  CHECK(hf.kind == "InferenceService");
  CHECK(hf.where == loc(f, 15, 7));
  CHECK(hf.argv == Words{"--model_name=llama3", "--model_id=meta-llama/meta-llama-3-8b-instruct",
                         "--max-model-len=8192", "--gpu-memory-utilization=0.85"});
  CHECK(hf.argv_where == loc(f, 18, 9));
  CHECK(hf.args_only);
  CHECK(hf.engine_hint == "vllm");                           // modelFormat huggingface: the runtime's vLLM backend
  CHECK(hf.model == "meta-llama/meta-llama-3-8b-instruct");  // no storageUri: --model_id
  CHECK(hf.env_from_secret == Words{"HF_TOKEN"});
  REQUIRE(hf.gpu_count);
  CHECK(*hf.gpu_count == 1);
  CHECK(hf.gpu_count_where == loc(f, 33, 27));
  CHECK(hf.gpu_product == "g6e.2xlarge");  // predictor.nodeSelector instance type
  CHECK(hf.gpu_product_where == loc(f, 13, 41));
  CHECK(hf.warnings.size() == 1);

  const auto& rt = ds[1];
  CHECK(rt.name == "ServingRuntime/vllm-runtime");
  CHECK(rt.where == loc(f, 48, 7));
  CHECK(rt.argv == Words{"python3", "-m", "vllm.entrypoints.openai.api_server", "--port=8080", "--model=/mnt/models",
                         "--served-model-name={{.Name}}"});
  CHECK_FALSE(rt.args_only);
  CHECK(rt.engine_hint == "vllm");

  const auto& qwen = ds[2];
  CHECK(qwen.name == "InferenceService/qwen-vllm");
  CHECK(qwen.argv == Words{"--max-model-len=16384", "--tensor-parallel-size=2"});
  CHECK(qwen.args_only);
  CHECK(qwen.engine_hint == "vllm");                // runtime: vllm-runtime
  CHECK(qwen.model == "Qwen/Qwen2.5-7B-Instruct");  // storageUri hf://Qwen/Qwen2.5-7B-Instruct
  REQUIRE(qwen.gpu_count);
  CHECK(*qwen.gpu_count == 2);
  CHECK(qwen.gpu_count_where == loc(f, 75, 27));
  CHECK(qwen.gpu_product.empty());
}

TEST_CASE("KubeAI Models: url, engine, args, resourceProfile, OLlama skipped", "[manifests]") {
  const std::string f = "kubeai-models.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 2);

  const auto& l4 = ds[0];
  CHECK(l4.name == "Model/llama-3.1-8b-instruct-fp8-l4");
  CHECK(l4.kind == "Model");
  CHECK(l4.where == loc(f, 9, 3));
  CHECK(l4.model == "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8");
  CHECK(l4.engine_hint == "vllm");
  CHECK(l4.args_only);
  CHECK(l4.argv == Words{"--max-model-len=16384", "--max-num-batched-token=16384", "--gpu-memory-utilization=0.9",
                         "--disable-log-requests"});
  CHECK(l4.argv_where == loc(f, 13, 5));
  CHECK(l4.env == Env{{"VLLM_ATTENTION_BACKEND", "FLASHINFER"}});
  CHECK(l4.gpu_product == "nvidia-gpu-l4");
  REQUIRE(l4.gpu_count);
  CHECK(*l4.gpu_count == 1);
  CHECK(l4.gpu_count_where == loc(f, 21, 20));

  const auto& h100 = ds[1];
  CHECK(h100.name == "Model/llama-3.1-405b-instruct-fp8-h100");
  CHECK(h100.gpu_product == "nvidia-gpu-h100");
  REQUIRE(h100.gpu_count);
  CHECK(*h100.gpu_count == 8);
  CHECK(h100.argv.back() == "--kv-cache-dtype=fp8");
  CHECK(h100.argv.size() == 8);
}

TEST_CASE("vLLM production-stack values: vllmConfig becomes the chart's vLLM arguments", "[manifests]") {
  const std::string f = "production-stack-values.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 2);

  // helm/templates/deployment-vllm-multi.yaml: vllm serve MODEL --host 0.0.0.0 --port 8000, then
  // chunked prefill (when given), prefix caching (always), max-model-len, dtype, tp, max-num-seqs,
  // gpu_memory_utilization, max_loras, extraArgs.
  const auto& llama = ds[0];
  CHECK(llama.name == "modelSpec/llama3");
  CHECK(llama.kind == "helm-values");
  CHECK(llama.where == loc(f, 7, 5));
  CHECK(llama.argv == Words{"--host", "0.0.0.0", "--port", "8000", "--no-enable-chunked-prefill",
                            "--enable-prefix-caching", "--max-model-len", "4096", "--dtype", "bfloat16",
                            "--max-num-seqs", "32", "--gpu_memory_utilization", "0.9", "--disable-log-requests",
                            "--kv-cache-dtype", "fp8"});
  CHECK(llama.argv_where == loc(f, 18, 7));
  CHECK(llama.args_only);
  CHECK(llama.engine_hint == "vllm");
  CHECK(llama.model == "meta-llama/Llama-3.1-8B-Instruct");
  CHECK(llama.image == "vllm/vllm-openai:v0.9.2");
  CHECK(llama.env == Env{{"VLLM_LOGGING_LEVEL", "INFO"}});
  CHECK(llama.env_from_secret == Words{"HF_TOKEN"});
  REQUIRE(llama.gpu_count);
  CHECK(*llama.gpu_count == 1);
  CHECK(llama.gpu_count_where == loc(f, 14, 17));
  CHECK(llama.gpu_product == "NVIDIA-L40S");
  CHECK(llama.gpu_product_where == loc(f, 34, 13));

  const auto& mistral = ds[1];
  CHECK(mistral.name == "modelSpec/mistral");
  CHECK(mistral.argv == Words{"--host", "0.0.0.0", "--port", "8000", "--no-enable-prefix-caching", "--max-model-len",
                              "32768", "--tensor-parallel-size", "2"});
  CHECK(mistral.model == "mistralai/Mistral-7B-Instruct-v0.2");
  REQUIRE(mistral.gpu_count);
  CHECK(*mistral.gpu_count == 2);
  CHECK(mistral.gpu_product.empty());
}

TEST_CASE("production-stack values: engine off, CPU spec, MIG type", "[manifests]") {
  CHECK(read_text("servingEngineSpec:\n  enableEngine: false\n  modelSpec:\n  - name: a\n    modelURL: m\n").empty());
  const auto ds = read_text(R"(servingEngineSpec:
  modelSpec:
  - name: cpu
    modelURL: /data/models/tinyllama
    requestGPU: 0
  - name: mig
    modelURL: m
    requestGPU: 1
    requestGPUType: "nvidia.com/mig-2g.20gb"
)");
  REQUIRE(ds.size() == 2);
  CHECK_FALSE(ds[0].gpu_count);
  CHECK(ds[0].argv == Words{"--host", "0.0.0.0", "--port", "8000"});  // no vllmConfig: no prefix-caching flag either
  REQUIRE(ds[1].gpu_count);
  CHECK(*ds[1].gpu_count == 1);
  CHECK(ds[1].mig_profile == "2g.20gb");
}

TEST_CASE("compose: llama-server command string, vllm entrypoint and list, GPU reservations", "[manifests]") {
  const std::string f = "compose-llama-server.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 2);  // open-webui holds GPUs but runs no engine

  const auto& ll = ds[0];
  CHECK(ll.name == "compose service llamacpp");
  CHECK(ll.kind == "compose");
  CHECK(ll.where == loc(f, 7, 5));
  CHECK(ll.argv == Words{"-m", "/models/Llama-3.2-3B-Instruct-Q6_K.gguf", "-c", "8192", "--parallel", "4", "--host",
                         "0.0.0.0", "--port", "8080", "--n-gpu-layers", "99"});
  CHECK(ll.argv_where == loc(f, 12, 14));
  CHECK(ll.args_only);  // the image's entry point is llama-server
  CHECK(ll.engine_hint == "llama.cpp");
  CHECK(ll.env == Env{{"NVIDIA_VISIBLE_DEVICES", "all"}, {"LLAMA_ARG_FLASH_ATTN", "on"}});
  REQUIRE(ll.gpu_count);
  CHECK(*ll.gpu_count == 1);
  CHECK(ll.gpu_count_where == loc(f, 27, 22));

  const auto& v = ds[1];
  CHECK(v.name == "compose service vllm");
  CHECK(v.argv == Words{"vllm", "serve", "Qwen/Qwen2.5-14B-Instruct", "--tensor-parallel-size", "2", "--max-model-len",
                        "${MAX_LEN:-16384}"});  // compose interpolation is the shell's business: as written
  CHECK(v.argv_where == loc(f, 33, 17));
  CHECK_FALSE(v.args_only);
  CHECK(v.env == Env{{"VLLM_USE_V1", "1"}});
  CHECK(v.env_from_secret == Words{"HF_TOKEN"});
  REQUIRE(v.gpu_count);
  CHECK(*v.gpu_count == 2);  // device_ids ["0", "1"]
  CHECK(v.gpu_count_where == loc(f, 44, 27));
}

TEST_CASE("compose: count all and runtime nvidia leave the GPU count open", "[manifests]") {
  const auto ds = read_text(R"(services:
  a:
    image: vllm/vllm-openai:latest
    command: --model m
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: all
              capabilities: [gpu]
  b:
    image: python:3.12
    command: python -m sglang.launch_server --model-path m
    runtime: nvidia
  c:
    image: postgres:16
)");
  REQUIRE(ds.size() == 2);
  CHECK(ds[0].name == "compose service a");
  CHECK_FALSE(ds[0].gpu_count);
  CHECK(ds[0].gpu_count_where == "t.yaml:9:15");
  CHECK(ds[0].warnings.size() == 1);
  CHECK(ds[1].name == "compose service b");
  CHECK_FALSE(ds[1].args_only);  // a program, not arguments
  CHECK(ds[1].argv.front() == "python");
  CHECK_FALSE(ds[1].gpu_count);
  CHECK(ds[1].gpu_count_where == "t.yaml:15:14");
}

TEST_CASE("multi-document file: Service and ConfigMap skipped, sh -c unwrapped, several engine containers",
          "[manifests]") {
  const std::string f = "multi-doc.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 3);

  const auto& m = ds[0];
  CHECK(m.name == "Deployment/mistral-7b");  // the nginx sidecar runs no engine: one engine container, no suffix
  CHECK(m.where == loc(f, 44, 9));
  CHECK(m.argv == Words{"vllm", "serve", "mistralai/Mistral-7B-Instruct-v0.3", "--trust-remote-code",
                        "--enable-chunked-prefill", "--max_num_batched_tokens", "1024"});
  CHECK(m.argv_where == loc(f, 46, 18));
  CHECK_FALSE(m.args_only);
  CHECK(m.env_from_secret == Words{"HUGGING_FACE_HUB_TOKEN"});
  REQUIRE(m.gpu_count);
  CHECK(*m.gpu_count == 1);
  CHECK(m.gpu_count_where == loc(f, 62, 29));

  CHECK(ds[1].name == "StatefulSet/llama-pair (container chat)");
  CHECK(ds[1].kind == "StatefulSet");
  CHECK(ds[1].where == loc(f, 88, 9));
  CHECK(ds[1].args_only);
  CHECK(ds[1].argv == Words{"-m", "/models/qwen2.5-7b-instruct-q4_k_m.gguf", "-c", "16384", "-np", "4", "-ngl", "99"});
  CHECK(ds[1].engine_hint == "llama.cpp");
  REQUIRE(ds[1].gpu_count);
  CHECK(ds[1].gpu_count_where == loc(f, 93, 29));
  CHECK(ds[2].name == "StatefulSet/llama-pair (container embed)");
}

TEST_CASE("MIG resource and required node affinity", "[manifests]") {
  const std::string f = "mig-pod.yaml";
  const auto ds = read(f);
  REQUIRE(ds.size() == 1);
  const auto& d = ds[0];
  CHECK(d.name == "Pod/vllm-mig");
  CHECK(d.where == loc(f, 24, 5));
  CHECK(d.args_only);
  CHECK(d.argv.size() == 6);
  CHECK(d.mig_profile == "3g.40gb");
  REQUIRE(d.gpu_count);
  CHECK(*d.gpu_count == 1);
  CHECK(d.gpu_count_where == loc(f, 29, 33));
  CHECK(d.gpu_product == "NVIDIA-A100-SXM4-80GB");  // the first value of the In list
  CHECK(d.gpu_product_where == loc(f, 21, 15));
}

TEST_CASE("workload kinds: Job, CronJob, DaemonSet, List, requests when no limits", "[manifests]") {
  const std::string container = R"(
              containers:
              - name: bench
                image: lmsysorg/sglang:latest
                command: ["python3", "-m", "sglang.launch_server", "--model-path", "m"]
                resources:
                  requests:
                    amd.com/gpu: 2
)";
  const auto cron = read_text(
      "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly\nspec:\n  jobTemplate:\n"
      "    spec:\n      template:\n        spec:" +
      container);
  REQUIRE(cron.size() == 1);
  CHECK(cron[0].name == "CronJob/nightly");
  REQUIRE(cron[0].gpu_count);
  CHECK(*cron[0].gpu_count == 2);  // requests, as there are no limits

  const auto list = read_text(R"(apiVersion: v1
kind: List
items:
- apiVersion: apps/v1
  kind: DaemonSet
  metadata:
    name: ds
  spec:
    template:
      spec:
        containers:
        - name: llama
          image: ghcr.io/ggml-org/llama.cpp:server
          args: ["-m", "/m.gguf"]
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: job
  spec:
    template:
      spec:
        containers:
        - name: trt
          image: nvcr.io/nvidia/tensorrt-llm/release:1.0.0
          command: ["trtllm-serve", "serve", "m"]
)");
  REQUIRE(list.size() == 2);
  CHECK(list[0].name == "DaemonSet/ds");
  CHECK(list[0].engine_hint == "llama.cpp");
  CHECK_FALSE(list[0].gpu_count);
  CHECK(list[1].name == "Job/job");
  CHECK(list[1].engine_hint == "trtllm");
}

TEST_CASE("template kinds of other operators: Argo Rollout, Knative Service, OpenShift DeploymentConfig",
          "[manifests]") {
  const std::string tpl = R"(
spec:
  template:
    spec:
      containers:
      - name: vllm
        image: vllm/vllm-openai:v0.10.1
        args: ["--model", "m"]
)";
  const auto ds = read_text("apiVersion: argoproj.io/v1alpha1\nkind: Rollout\nmetadata:\n  name: r\n" + tpl +
                            "---\napiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: k\n" + tpl +
                            "---\napiVersion: apps.openshift.io/v1\nkind: DeploymentConfig\nmetadata:\n  name: o\n" +
                            tpl + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: s\n" + tpl);
  REQUIRE(ds.size() == 3);  // a core Service is not a workload
  CHECK(ds[0].name == "Rollout/r");
  CHECK(ds[1].name == "Service/k");
  CHECK(ds[2].name == "DeploymentConfig/o");
}

TEST_CASE("containers that run no engine are skipped, unsure GPU containers kept", "[manifests]") {
  const auto ds = read_text(pod_head + R"(  containers:
  - name: exporter
    image: prom/node-exporter
  - name: custom
    image: registry.example.com/team/server:1
    args: ["--model", "m"]
    resources:
      limits:
        nvidia.com/gpu: 1
)");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].name == "Pod/p");
  CHECK(ds[0].engine_hint.empty());
  CHECK(ds[0].args_only);
  CHECK(read_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  a: b\n").empty());
  CHECK(read_text("apiVersion: example.com/v1\nkind: Model\nmetadata:\n  name: m\nspec: {}\n").empty());
  // KServe predictors and runtimes of other frameworks (no engine, no GPU) are not engines either.
  CHECK(read_text(R"(apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: sklearn-iris
spec:
  predictor:
    model:
      modelFormat:
        name: sklearn
      storageUri: gs://kfserving-examples/models/sklearn/1.0/model
---
apiVersion: serving.kserve.io/v1alpha1
kind: ClusterServingRuntime
metadata:
  name: kserve-sklearnserver
spec:
  containers:
    - name: kserve-container
      image: kserve/sklearnserver:latest
      args: ["--model_name={{.Name}}", "--model_dir=/mnt/models", "--http_port=8080"]
)")
            .empty());
}

TEST_CASE("malformed resources are errors with their location", "[manifests]") {
  CHECK(error_of(pod_head + "  containers:\n    name: vllm\n") ==
        "t.yaml:7:5: containers: expected a list, got an object");
  CHECK(error_of(pod_head + "  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    args: --model m\n") ==
        "t.yaml:9:11: args: expected a list, got string \"--model m\"");
  CHECK(error_of(pod_head +
                 "  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    args: [\"--port\", 8000]\n") ==
        "t.yaml:9:22: args: expected a list of strings, got 8000 at item 1; quote the value");
  CHECK(error_of(pod_head +
                 "  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    resources:\n      limits:\n"
                 "        nvidia.com/gpu: 0\n") ==
        "t.yaml:11:25: nvidia.com/gpu: expected a positive whole number of GPUs, got 0; write e.g. nvidia.com/gpu: 1");
  CHECK(error_of(pod_head +
                 "  containers:\n  - name: vllm\n    image: vllm/vllm-openai\n    resources:\n      limits:\n"
                 "        nvidia.com/gpu: \"1.5\"\n") ==
        "t.yaml:11:25: nvidia.com/gpu: expected a positive whole number of GPUs, got string \"1.5\"; write e.g. "
        "nvidia.com/gpu: 1");
  CHECK(error_of("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  replicas: 1\n") ==
        "t.yaml:6:3: missing spec.template; add template:");
  CHECK(error_of("apiVersion: kubeai.org/v1\nkind: Model\nmetadata:\n  name: m\nspec:\n  engine: VLLM\n"
                 "  resourceProfile: nvidia-gpu-l4\n") ==
        "t.yaml:7:20: resourceProfile: expected PROFILE:COUNT with a positive COUNT, got 'nvidia-gpu-l4'; write e.g. "
        "nvidia-gpu-l4:1");
}

TEST_CASE("production-stack values: LMCache, chat template, envFromSecret as the chart writes them", "[manifests]") {
  const auto ds = read_text(R"(servingEngineSpec:
  containerPort: 8080
  modelSpec:
  - name: lmc
    repository: lmcache/vllm-openai
    tag: latest
    modelURL: Qwen/Qwen3-8B
    requestGPU: 1
    chatTemplate: chat.jinja
    envFromSecret:
      name: vllm-env
    vllmConfig:
      enablePrefixCaching: false
    lmcacheConfig:
      enabled: true
      cpuOffloadingBufferSize: "20"
)");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].argv == Words{"--host", "0.0.0.0", "--port", "8080", "--no-enable-prefix-caching", "--kv-transfer-config",
                            R"({"kv_connector":"LMCacheConnectorV1","kv_role":"kv_both"})", "--chat-template",
                            "/templates/chat.jinja"});
  CHECK(ds[0].env_from_secret == Words{"secretRef/vllm-env"});
}

TEST_CASE("production-stack values: raySpec (pipeline parallel over a KubeRay cluster)", "[manifests]") {
  // Shape of production-stack tutorials/assets/values-15-a-minimal-pipeline-parallel-example-raycluster.yaml.
  const auto ds = read_text(R"(servingEngineSpec:
  modelSpec:
  - name: "distilgpt2"
    repository: "vllm/vllm-openai"
    tag: "latest"
    modelURL: "distilbert/distilgpt2"
    replicaCount: 1
    requestGPU: 1
    vllmConfig:
      tensorParallelSize: 1
      pipelineParallelSize: 2
    raySpec:
      headNode:
        requestCPU: 2
        requestGPU: 1
)");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].argv == Words{"--host", "0.0.0.0", "--port", "8000", "--no-enable-prefix-caching",
                            "--tensor-parallel-size", "1", "--pipeline-parallel-size", "2"});
  REQUIRE(ds[0].pods_per_group);
  CHECK(*ds[0].pods_per_group == 2);  // head + replicaCount workers
  REQUIRE(ds[0].gpu_count);
  CHECK(*ds[0].gpu_count == 1);
  CHECK(ds[0].gpu_count_where == "t.yaml:15:21");
}

TEST_CASE("KServe framework predictor: predictor.huggingface", "[manifests]") {
  const auto ds = read_text(R"(apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata:
  name: hf
spec:
  predictor:
    huggingface:
      args: ["--model_name=m", "--model_id=org/m"]
      resources:
        limits:
          nvidia.com/gpu: 1
)");
  REQUIRE(ds.size() == 1);
  CHECK(ds[0].name == "InferenceService/hf");
  CHECK(ds[0].engine_hint == "vllm");
  CHECK(ds[0].model == "org/m");
}

TEST_CASE("malformed shapes raise InputError and nothing else", "[manifests]") {
  const std::vector<std::string> texts = {
      "apiVersion: v1\nkind: Pod\nspec: []\n",
      "apiVersion: v1\nkind: Pod\nmetadata: 3\nspec:\n  containers: [1]\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: [a]\n    image: vllm/vllm-openai\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    env: {A: b}\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    env: [{name: 1}]\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    env: [{name: A, value: "
      "[1]}]\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    envFrom: [1, {secretRef: "
      "2}]\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: 5\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    resources: {limits: [1]}\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: vllm/vllm-openai\n    resources: {limits: "
      "{nvidia.com/gpu: -1}}\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  nodeSelector: [1]\n  containers: []\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  nodeSelector: {nvidia.com/gpu.product: [1]}\n  containers: []\n",
      "apiVersion: v1\nkind: Pod\nspec:\n  affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
      "{nodeSelectorTerms: [1, {matchExpressions: [2, {key: 3}, {key: nvidia.com/gpu.product, operator: In, values: "
      "[]}]}]}}}\n"
      "  containers: []\n",
      "apiVersion: v1\nkind: 7\n",
      "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
      "apiVersion: v1\nkind: List\nitems: [1, {kind: List, items: [1]}]\n",
      "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nspec:\n  leaderWorkerTemplate: {size: x}\n",
      "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nspec:\n  leaderWorkerTemplate: {size: 2}\n",
      "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor: {model: {modelFormat: 1}}\n",
      "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor: {model: {args: [1]}}\n",
      "apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nspec:\n  predictor: {containers: {a: 1}}\n",
      "apiVersion: kubeai.org/v1\nkind: Model\nspec:\n  engine: [VLLM]\n",
      "apiVersion: kubeai.org/v1\nkind: Model\nspec:\n  engine: VLLM\n  env: [A]\n",
      "apiVersion: kubeai.org/v1\nkind: Model\nspec:\n  engine: VLLM\n  resourceProfile: 'x:99999999999'\n",
      "apiVersion: kubeai.org/v1\nkind: Model\nspec:\n  engine: VLLM\n  args: --max-model-len=4096\n",
      "servingEngineSpec: [1]\n",
      "servingEngineSpec:\n  modelSpec: {a: 1}\n",
      "servingEngineSpec:\n  modelSpec: [1]\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    requestGPU: -1\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    vllmConfig: {extraArgs: [[1]]}\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    vllmConfig: {maxModelLen: {a: 1}}\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    env: [{value: 1}]\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    nodeSelectorTerms: {a: 1}\n",
      "servingEngineSpec:\n  modelSpec:\n  - name: a\n    lmcacheConfig: {enabled: true, kvRole: [1]}\n",
      "services: [1]\n",
      "services:\n  a: 1\n  b:\n    image: vllm/vllm-openai\n    command: {a: 1}\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    command: \"--model 'm\"\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    environment: 3\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    environment: [[1]]\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    deploy: {resources: {reservations: {devices: [1]}}}\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    deploy: {resources: {reservations: {devices: [{driver: "
      "nvidia, count: 0}]}}}\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    deploy: {resources: {reservations: {devices: [{driver: "
      "nvidia, device_ids: 0}]}}}\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    gpus: {a: 1}\n",
      "services:\n  b:\n    image: vllm/vllm-openai\n    runtime: [nvidia]\n",
  };
  for (const auto& t : texts) {
    INFO(t);
    try {
      read_text(t);
    } catch (const InputError& e) {
      CHECK(std::string(e.what()).rfind("t.yaml", 0) == 0);  // every error names the file
    } catch (const std::exception& e) {
      FAIL("not an InputError: " << e.what());
    }
  }
}
