import SQLBuilding

// Conversions that read floating-point numbers as text (to or from decimal, double to float)
// give the offline step's result only under its `extra_float_digits` (`ShortestFloatText`, set
// for the step's one transaction). Online the work runs in many transactions, and the triggers
// in the application's sessions, under whatever setting those have:
// 1. every phase that reads rows (the checks of values, the batches) sets it first (`SET LOCAL`);
// 2. a trigger function converting such a column pins it for its own execution (its `SET`
//    clause), so a row the application writes converts as the offline step converts it.

extension OnlinePhase {
    /// The phase with the offline step's setting in each transaction that reads rows; catalog
    /// changes read none, and an index built concurrently converts nothing.
    var readingFloatTextAsOffline: OnlinePhase {
        let setting = ShortestFloatText().statements(in: "")
        var phase = self
        switch execution {
        case .transaction where hold == .scan:
            phase.statements = setting + statements
        case .batches:
            phase.batches?.setup = setting.map(\.sql)
        case .transaction, .outsideTransaction:
            break
        }
        return phase
    }
}
