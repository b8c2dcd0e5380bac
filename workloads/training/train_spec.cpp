#include "workloads/training/train_spec.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/error.hpp"
#include "common/limits.hpp"
#include "common/strict_json.hpp"

namespace tilesim::workloads::training {

namespace {

// torch.optim's defaults: SGD(lr=1e-3, momentum=0, weight_decay=0) (lr has defaulted to 1e-3 since
// PyTorch 2.2), Adam(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0).
OptimizerSpec read_optimizer(ObjectReader& r) {
  OptimizerSpec o;
  const std::string kind = r.one_of("kind", {"sgd", "adam"});
  constexpr double huge = std::numeric_limits<double>::max();
  o.lr = r.number_or("lr", 0, huge, 1e-3);
  o.weight_decay = r.number_or("weight_decay", 0, huge, 0);
  if (kind == "sgd") {
    o.kind = OptimizerSpec::Kind::sgd;
    o.momentum = r.number_or("momentum", 0, huge, 0);
  } else {
    o.kind = OptimizerSpec::Kind::adam;
    if (r.has("betas")) {
      const nlohmann::json& betas = r.value("betas");
      const std::string expected = "[beta1, beta2], two numbers in [0, 1) (torch.optim.Adam's betas)";
      if (!betas.is_array() || betas.size() != 2 || !betas[0].is_number() || !betas[1].is_number())
        throw InputError(r.file(), r.path_of("betas"), expected, describe_json(betas));
      for (std::size_t i = 0; i < 2; ++i) {
        const double b = betas[i].get<double>();
        if (!(b >= 0 && b < 1)) throw InputError(r.file(), r.path_of("betas") + "[" + std::to_string(i) + "]", expected, describe_json(betas[i]));
      }
      o.beta1 = betas[0].get<double>();
      o.beta2 = betas[1].get<double>();
    } else {
      r.ignore("betas");
    }
    o.eps = r.number_or("eps", 0, huge, 1e-8);
  }
  r.finish();
  return o;
}

}  // namespace

std::string to_string(TrainSpec::Task task) { return task == TrainSpec::Task::node ? "node" : "graph"; }
std::string to_string(TrainSpec::Pool pool) { return pool == TrainSpec::Pool::add ? "add" : "mean"; }

TrainSpec parse_train(const nlohmann::json& object, const std::string& file, const std::string& json_path) {
  if (!object.is_object()) throw InputError(file, json_path, "an object (the training step)", describe_json(object));
  ObjectReader r(object, file, json_path);
  TrainSpec s;
  s.task = r.one_of("task", {"node", "graph"}) == "node" ? TrainSpec::Task::node : TrainSpec::Task::graph;
  s.loss = *loss_fn_from_string(r.one_of("loss", {"cross_entropy", "mse"}));
  if (s.task == TrainSpec::Task::node) {
    if (r.has_refused("pool"))
      throw InputError(file, r.path_of("pool"), "no \"pool\" for a node task (it pools graphs: \"task\": \"graph\")",
                       describe_json(r.value("pool")));
    s.train_fraction = r.number_or("train_fraction", 0, 1, 1);
    if (!(s.train_fraction > 0))
      throw InputError(file, r.path_of("train_fraction"), "a share in (0, 1] of the nodes", describe_json(s.train_fraction));
  } else {
    if (r.has_refused("train_fraction"))
      throw InputError(file, r.path_of("train_fraction"),
                       "no \"train_fraction\" for a graph task (every graph of the batch is in the loss)",
                       describe_json(r.value("train_fraction")));
    if (r.has("pool")) {
      s.pool = r.one_of("pool", {"add", "mean"}) == "mean" ? TrainSpec::Pool::mean : TrainSpec::Pool::add;
      s.pool_given = true;
    }
    r.ignore("pool");
  }
  if (!r.has("optimizer"))
    throw InputError(file, r.path_of("optimizer"), "an \"optimizer\" object ({\"kind\": \"sgd\" or \"adam\", ...})", "none");
  ObjectReader opt = r.object("optimizer");
  s.optimizer = read_optimizer(opt);
  s.steps = r.integer_or("steps", 1, limits::max_steps, 1);
  if (r.has("recompute")) s.recompute = r.boolean("recompute");
  r.ignore("recompute");
  if (r.has("loss_scale")) {
    const nlohmann::json& v = r.value("loss_scale");
    const std::string expected = "a power of two from 1 to 16777216 (2^0 to 2^24: the static loss scale, exact in float32)";
    if (!v.is_number()) throw InputError(file, r.path_of("loss_scale"), expected, describe_json(v));
    const double scale = v.get<double>();
    int exponent = 0;
    // A power of two has the mantissa 0.5 in frexp's form.
    if (!(scale >= 1 && scale <= kMaxLossScale) || std::frexp(scale, &exponent) != 0.5)
      throw InputError(file, r.path_of("loss_scale"), expected, describe_json(v));
    s.loss_scale = scale;
  }
  r.ignore("loss_scale");
  if (r.has("master_weight_dtype")) {
    // Echoed so that a report says what the step trains; float32 is the only master dtype there is.
    const nlohmann::json& v = r.value("master_weight_dtype");
    if (!v.is_string() || v.get<std::string>() != to_string(kMasterWeightDType))
      throw InputError(file, r.path_of("master_weight_dtype"),
                       "\"float32\" (the trained parameters and the optimizer state are float32 master weights in every model)",
                       describe_json(v));
  }
  r.ignore("master_weight_dtype");
  r.finish();
  return s;
}

double default_loss_scale(DType model_dtype) { return model_dtype == DType::float16 ? 1024.0 : 1.0; }

nlohmann::json to_json(const TrainSpec& s) {
  nlohmann::json j;
  j["task"] = to_string(s.task);
  j["loss"] = to_string(s.loss);
  if (s.task == TrainSpec::Task::node) j["train_fraction"] = s.train_fraction;
  else if (!s.model_pools) j["pool"] = to_string(s.pool);
  nlohmann::json o{{"kind", to_string(s.optimizer.kind)}, {"lr", s.optimizer.lr}, {"weight_decay", s.optimizer.weight_decay}};
  if (s.optimizer.kind == OptimizerSpec::Kind::sgd) {
    o["momentum"] = s.optimizer.momentum;
  } else {
    o["betas"] = {s.optimizer.beta1, s.optimizer.beta2};
    o["eps"] = s.optimizer.eps;
  }
  j["optimizer"] = o;
  j["steps"] = s.steps;
  j["recompute"] = s.recompute;
  if (s.loss_scale) j["loss_scale"] = *s.loss_scale;
  j["master_weight_dtype"] = to_string(kMasterWeightDType);
  return j;
}

}  // namespace tilesim::workloads::training
