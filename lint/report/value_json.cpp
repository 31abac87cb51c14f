#include "lint/report/value_json.h"

#include <cmath>

namespace mblint {

nlohmann::ordered_json value_json(const ConfigValue& value) {
  using Json = nlohmann::ordered_json;
  switch (value.kind) {
    case ValueKind::Null:
    case ValueKind::Unknown: return nullptr;  // resolve_job never passes an unknown value
    case ValueKind::Bool: return value.boolean;
    case ValueKind::Int: return value.integer;
    case ValueKind::Float: return std::isfinite(value.real) ? Json(value.real) : Json(to_display(value));
    case ValueKind::String: return value.text;
    case ValueKind::List: {
      Json list = Json::array();
      for (const ConfigValue& item : value.items) list.push_back(value_json(item));
      return list;
    }
    case ValueKind::Map: {
      Json map = Json::object();
      for (const MapEntry& entry : value.entries) map[entry.key] = value_json(entry.value);
      return map;
    }
  }
  return nullptr;
}

}  // namespace mblint
