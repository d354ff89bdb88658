// An orchestrator executable with a custom entity migration policy registered: what
// docs/custom-policies.md walks through. Run it like `orchestrator`:
//   swift run orchestrator-with-policies apply --model Examples/people --database-url …
import Engine
import ExamplePolicies
import OrchestratorCLI

PolicyRegistry.shared.register("PersonSplit") { PersonSplitPolicy() }
Orchestrator.main()
