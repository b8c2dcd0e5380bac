#include "models/gpu/eager_calls.hpp"

#include <cstdlib>
#include <mutex>
#include <set>
#include <stdexcept>

#include "common/error.hpp"
#include "common/strict_json.hpp"
#include "models/gpu/gpu_machine.hpp"

namespace tilesim::gpu {

namespace {

// Probe sizes: pairwise distinct and none a product of two others, so each recorded dimension names
// exactly one OpShape field.
constexpr std::int64_t probe_inputs = 37, probe_features = 12, probe_outputs = 23, probe_out_features = 13,
                       probe_groups = 3;

std::string binary_form(const OpShape& s) {
  if (s.other_rows == 1) return "row";
  if (s.other_groups == s.num_features) return "same";
  if (s.other_groups == 1) return "per_row";
  return "per_group";
}

Op probe(const std::string& name, OpKind kind) {
  Op op;
  op.name = name;
  op.kind = kind;
  op.shape.num_inputs = probe_inputs;
  op.shape.num_features = probe_features;
  return op;
}

}  // namespace

std::string eager_signature(const Op& op) {
  if (op.phase != OpPhase::forward) return "";
  switch (op.kind) {
    case OpKind::gather:
    case OpKind::scatter_add:
    case OpKind::scatter_mean:
    case OpKind::scatter_max:
    case OpKind::degree_count: return to_string(op.kind);
    case OpKind::matmul:
      if (op.transpose_input || op.transpose_weight) return "";
      return op.bias >= 0 ? "matmul+bias" : "matmul";
    case OpKind::unary: return "unary:" + to_string(op.unary);
    case OpKind::binary: return "binary:" + to_string(op.binary) + ":" + binary_form(op.shape);
    default: return "";
  }
}

std::vector<Op> eager_probe_ops() {
  std::vector<Op> ops;
  for (OpKind kind : {OpKind::gather, OpKind::scatter_add, OpKind::scatter_mean, OpKind::scatter_max}) {
    Op op = probe(to_string(kind), kind);
    op.shape.num_outputs = probe_outputs;
    ops.push_back(op);
  }
  Op degree = probe("degree_count", OpKind::degree_count);
  degree.shape.num_features = 1;
  degree.shape.num_outputs = probe_outputs;
  ops.push_back(degree);
  for (bool bias : {false, true}) {
    Op mm = probe(bias ? "matmul+bias" : "matmul", OpKind::matmul);
    mm.shape.out_features = probe_out_features;
    mm.bias = bias ? 0 : -1;  // only whether it has one matters here
    ops.push_back(mm);
  }
  for (UnaryFn fn : {UnaryFn::relu, UnaryFn::leaky_relu, UnaryFn::shifted_softplus, UnaryFn::exp, UnaryFn::scale,
                     UnaryFn::rsqrt_or_zero, UnaryFn::reciprocal_or_zero, UnaryFn::cosine_cutoff, UnaryFn::sigmoid,
                     UnaryFn::softplus, UnaryFn::sqrt, UnaryFn::log, UnaryFn::clamp_min}) {
    Op op = probe("unary:" + to_string(fn), OpKind::unary);
    op.unary = fn;
    op.scalar = fn == UnaryFn::cosine_cutoff ? 6.0f : fn == UnaryFn::leaky_relu ? 0.2f : 1.5f;
    ops.push_back(op);
  }
  for (BinaryFn fn : {BinaryFn::add, BinaryFn::subtract, BinaryFn::multiply, BinaryFn::divide, BinaryFn::equal}) {
    const std::vector<std::pair<std::int64_t, std::int64_t>> forms = {
        {1, probe_features}, {probe_inputs, probe_features}, {probe_inputs, 1}, {probe_inputs, probe_groups}};
    for (const auto& [rows, groups] : forms) {
      Op op = probe("", OpKind::binary);
      op.binary = fn;
      op.shape.other_rows = rows;
      op.shape.other_groups = groups;
      op.name = eager_signature(op);
      ops.push_back(op);
    }
  }
  return ops;
}

std::string probe_dimension_symbol(std::int64_t size, const Op& p) {
  if (size == 1) return "1";
  const OpShape& s = p.shape;
  std::vector<std::pair<std::string, std::int64_t>> fields = {{"num_inputs", s.num_inputs}, {"num_features", s.num_features}};
  if (s.num_outputs > 0) fields.emplace_back("num_outputs", s.num_outputs);
  if (s.out_features > 0) fields.emplace_back("out_features", s.out_features);
  if (p.kind == OpKind::binary && s.other_groups > 1 && s.other_groups != s.num_features) {
    fields.emplace_back("other_groups", s.other_groups);
    fields.emplace_back("num_features/other_groups", s.num_features / s.other_groups);
  }
  std::string found;
  for (const auto& [name, value] : fields)
    if (value == size) {
      if (!found.empty())
        throw std::invalid_argument("probe op '" + p.name + "': size " + std::to_string(size) + " is both " + found + " and " + name);
      found = name;
    }
  if (found.empty())
    throw std::invalid_argument("probe op '" + p.name + "': a recorded size " + std::to_string(size) + " is none of its shape's fields");
  return found;
}

std::int64_t dimension_size(const std::string& symbol, const Op& op) {
  const OpShape& s = op.shape;
  if (symbol == "1") return 1;
  if (symbol == "num_inputs") return s.num_inputs;
  if (symbol == "num_features") return s.num_features;
  if (symbol == "num_outputs") return s.num_outputs;
  if (symbol == "out_features") return s.out_features;
  if (symbol == "other_groups") return s.other_groups;
  if (symbol == "num_features/other_groups") return s.other_groups > 0 ? s.num_features / s.other_groups : 0;
  throw std::invalid_argument("unknown dimension symbol \"" + symbol + "\"");
}

bool is_view_op(const std::string& aten_op) {
  // Views and metadata-only operators, and allocations that leave memory uninitialised: no kernel.
  static const std::set<std::string> views = {
      "aten::view",  "aten::expand",        "aten::expand_as",      "aten::t",         "aten::transpose",
      "aten::unsqueeze", "aten::squeeze",  "aten::select",         "aten::slice",     "aten::as_strided",
      "aten::reshape", "aten::_reshape_alias", "aten::alias",      "aten::detach",    "aten::permute",
      "aten::empty", "aten::empty_like",   "aten::empty_strided",  "aten::new_empty", "aten::new_empty_strided",
      "aten::resize_", "aten::lift_fresh", "aten::result_type",    "aten::size",      "aten::numel",
      "aten::dim",   "aten::is_nonzero",   "aten::broadcast_tensors", "aten::_unsafe_view",
      "aten::resolve_conj", "aten::resolve_neg"};
  return views.count(aten_op) > 0;
}

int RecordedSequence::python_calls() const {
  int n = 0;
  for (const auto& c : calls) n += c.depth == 0 ? 1 : 0;
  return n;
}
int RecordedSequence::kernel_calls() const {
  int n = 0;
  for (const auto& c : calls) n += c.depth == 0 && c.launches_kernel ? 1 : 0;
  return n;
}
int RecordedSequence::view_calls() const { return python_calls() - kernel_calls(); }

namespace {

// Whether calls[i] or an operator nested in it is not a view.
bool launches(const std::vector<RecordedCall>& calls, std::size_t i) {
  if (!is_view_op(calls[i].op)) return true;
  for (std::size_t j = i + 1; j < calls.size() && calls[j].depth > calls[i].depth; ++j)
    if (!calls[j].autograd_node && !is_view_op(calls[j].op)) return true;
  return false;
}

}  // namespace

int RecordedSequence::backward_nodes() const {
  int n = 0;
  for (const auto& c : backward) n += c.autograd_node ? 1 : 0;
  return n;
}

int RecordedSequence::backward_kernels() const {
  // The innermost non-view operators of autograd's nodes and of the engine's own frames (the engine sums
  // a broadcast input's gradient down), outside AccumulateGrad, whose work is the parameters'
  // accumulation (the optimizer side). A composite operator (index_select_backward: new_zeros, index_add_)
  // counts its kernels, not itself.
  int n = 0;
  std::vector<std::size_t> stack;  // open frames, outermost first
  for (std::size_t i = 0; i < backward.size(); ++i) {
    while (!stack.empty() && backward[stack.back()].depth >= backward[i].depth) stack.pop_back();
    bool in_accumulate = false;
    for (std::size_t f : stack) in_accumulate = in_accumulate || backward[f].op.find("AccumulateGrad") != std::string::npos;
    stack.push_back(i);
    const RecordedCall& c = backward[i];
    if (in_accumulate || c.autograd_node || c.op.rfind("aten::", 0) != 0 || is_view_op(c.op)) continue;
    bool has_kernel_inside = false;
    for (std::size_t j = i + 1; j < backward.size() && backward[j].depth > c.depth; ++j)
      has_kernel_inside = has_kernel_inside || (backward[j].op.rfind("aten::", 0) == 0 && !is_view_op(backward[j].op));
    if (!has_kernel_inside) ++n;
  }
  return n;
}

namespace {

std::vector<RecordedCall> read_calls(ObjectReader& sig, const std::string& key, const std::string& file, bool backward) {
  std::vector<RecordedCall> out;
  const nlohmann::json& list = sig.array(key);
  for (std::size_t i = 0; i < list.size(); ++i) {
    ObjectReader c(list[i], file, sig.element_path(key, i));
    RecordedCall call;
    call.op = c.string("op");
    call.depth = static_cast<int>(c.integer("depth", 0, 64));
    if (backward && c.has("autograd_node")) call.autograd_node = c.boolean("autograd_node");
    const nlohmann::json& shapes = c.value("shapes");
    if (!shapes.is_array()) throw InputError(file, c.path_of("shapes"), "an array of shapes", describe_json(shapes));
    for (const auto& shape : shapes) {
      std::vector<std::string> dims;
      if (!shape.is_array()) throw InputError(file, c.path_of("shapes"), "arrays of dimension symbols", describe_json(shape));
      for (const auto& d : shape) {
        if (!d.is_string()) throw InputError(file, c.path_of("shapes"), "dimension symbols (strings)", describe_json(d));
        dims.push_back(d.get<std::string>());
      }
      call.shapes.push_back(std::move(dims));
    }
    c.finish();
    out.push_back(std::move(call));
  }
  return out;
}

}  // namespace

EagerRecord parse_eager_record(const nlohmann::json& calls_doc, const std::string& calls_file, const nlohmann::json& layers_doc,
                               const std::string& layers_file) {
  EagerRecord r;
  r.calls_file = calls_file;
  r.layers_file = layers_file;
  ObjectReader root(calls_doc, calls_file, "");
  root.ignore("description");
  r.recorded_with = root.string("recorded_with");
  ObjectReader sigs = root.object("signatures");
  for (const auto& [key, value] : calls_doc.at("signatures").items()) {
    (void)value;
    ObjectReader sig = sigs.object(key);
    RecordedSequence seq;
    seq.python = sig.string("python");
    seq.calls = read_calls(sig, "calls", calls_file, false);
    if (sig.has("backward")) seq.backward = read_calls(sig, "backward", calls_file, true);
    sig.finish();
    // Which depth-0 calls launch kernels: the call or one nested in it is not a view.
    for (std::size_t i = 0; i < seq.calls.size(); ++i)
      if (seq.calls[i].depth == 0) seq.calls[i].launches_kernel = launches(seq.calls, i);
    if (seq.calls.empty() || seq.calls.front().depth != 0)
      throw InputError(calls_file, "signatures." + key + ".calls", "a sequence starting with a depth-0 call", "none");
    r.sequences.emplace(key, std::move(seq));
  }
  root.finish();

  ObjectReader lroot(layers_doc, layers_file, "");
  lroot.ignore("description");
  ObjectReader layers = lroot.object("layers");
  for (const auto& [kind, value] : layers_doc.at("layers").items()) {
    (void)value;
    ObjectReader l = layers.object(kind);
    LayerStructure s;
    s.module_calls = static_cast<int>(l.integer("module_calls", 0, 1000));
    s.propagate_calls = static_cast<int>(l.integer("propagate_calls", 0, 1000));
    s.source = l.string("source");
    l.finish();
    r.layers.emplace(kind, s);
  }
  layers.finish();
  lroot.finish();
  return r;
}

std::string eager_record_dir() {
  if (const char* env = std::getenv("TILESIM_EAGER_DIR"); env && *env) return env;
  return TILESIM_GPU_EAGER_DIR;
}

const EagerRecord& eager_record() {
  static EagerRecord record;
  static std::once_flag once;
  std::call_once(once, [] {
    const std::string dir = eager_record_dir();
    const std::string calls = dir + "/aten_calls.json", layers = dir + "/pyg_layers.json";
    record = parse_eager_record(load_json_file(calls), calls, load_json_file(layers), layers);
  });
  return record;
}

const RecordedSequence* recorded_sequence(const Op& op) {
  const std::string key = eager_signature(op);
  if (key.empty()) return nullptr;
  const auto& seqs = eager_record().sequences;
  const auto it = seqs.find(key);
  if (it == seqs.end())
    throw InputError(eager_record().calls_file, "signatures", "a recorded sequence for \"" + key + "\" (rerun tilesim-record-eager)",
                     "none");
  return &it->second;
}

double recorded_host_s(const RecordedSequence& seq, const GpuMachine& m) {
  return seq.kernel_calls() * m.eager.aten_call_s + seq.view_calls() * m.eager.aten_view_call_s;
}

nlohmann::json instantiate(const RecordedSequence& seq, const Op& op) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& c : seq.calls) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const auto& shape : c.shapes) {
      nlohmann::json dims = nlohmann::json::array();
      for (const auto& d : shape) dims.push_back(dimension_size(d, op));
      shapes.push_back(dims);
    }
    nlohmann::json call = {{"op", c.op}, {"depth", c.depth}, {"shapes", shapes}};
    if (c.depth == 0) call["launches_kernel"] = c.launches_kernel;
    out.push_back(call);
  }
  return out;
}

}  // namespace tilesim::gpu
