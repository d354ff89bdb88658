import OrchestratorCLI

Orchestrator.main()
