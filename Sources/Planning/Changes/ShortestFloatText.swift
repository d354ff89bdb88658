import SQLBuilding

/// Floating-point numbers printed in their shortest exact form (PostgreSQL's default, which a
/// server or role may change), for the conversions and checks that read them as text.
struct ShortestFloatText: SchemaChange {
    var kind: ChangeKind { .shortestFloatText(self) }

    /// As `SET` and a function's `SET` clause spell it.
    static let setting: SQL = "extra_float_digits = 1"

    func statements(in schema: String) -> [PlannedStatement] {
        [PlannedStatement("SET LOCAL \(Self.setting)", lock: .none, summary: "print floating-point numbers in their shortest exact form")]
    }
}

extension ShortestFloatText: OnlineChange {
    /// Nothing of its own: the planner gives the setting to the phases that read rows.
    func onlineForm(in schema: String) -> OnlineForm {
        .phases([])
    }
}
