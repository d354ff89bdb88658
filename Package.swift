// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "orchestrator",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "orchestrator", targets: ["orchestrator"]),
        .library(
            name: "Orchestrator",
            targets: ["JSONRendering", "ObjectModel", "SQLBuilding", "Mapping", "Planning", "PostgresClient", "Engine", "OrchestratorCLI"]
        ),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.2.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // libpq, from the system (libpq-dev); imported by PostgresClient only.
        .systemLibrary(
            name: "CLibPQ",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        // Pure: SQL as a value (text + binds), identifier and literal quoting.
        .target(name: "SQLBuilding"),
        // Pure: JSON with keys in the order given, shared by every renderer and the store's metadata.
        .target(name: "JSONRendering"),
        // Pure: object model, versioned models, loaders, validation, version hashes.
        .target(
            name: "ObjectModel",
            dependencies: [
                "JSONRendering",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Pure: mapping models and their expressions: parse, type-check, to SQL, evaluate.
        .target(name: "Mapping", dependencies: ["ObjectModel", "SQLBuilding", "JSONRendering", .product(name: "Yams", package: "Yams")]),
        // Pure: store layout, plans. Never talks to a database.
        .target(name: "Planning", dependencies: ["ObjectModel", "SQLBuilding", "Mapping"]),
        // The only module that talks to libpq.
        .target(name: "PostgresClient", dependencies: ["CLibPQ", "SQLBuilding", .product(name: "Logging", package: "swift-log")]),
        // Executes plans against PostgreSQL: metadata, locks, transactions.
        // Fleets (Engine/Fleet) read their YAML file through ObjectModel's YAMLReader, on Yams nodes.
        .target(name: "Engine", dependencies: ["Planning", "Mapping", "ObjectModel", "SQLBuilding", "JSONRendering", "PostgresClient", .product(name: "Yams", package: "Yams")]),
        .target(
            name: "OrchestratorCLI",
            // Every module the CLI imports. PostgresClient: connecting (Connect.swift) and the
            // errors it reports; everything else reaches the database through the Engine.
            dependencies: [
                "Engine",
                "Planning",
                "Mapping",
                "ObjectModel",
                "SQLBuilding",
                "JSONRendering",
                "PostgresClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "orchestrator", dependencies: ["OrchestratorCLI"]),
        // docs/custom-policies.md: an orchestrator executable with a policy registered.
        .target(name: "ExamplePolicies", dependencies: ["Engine", "Mapping"], path: "Examples/Policies"),
        .executableTarget(name: "orchestrator-with-policies", dependencies: ["OrchestratorCLI", "Engine", "ExamplePolicies"], path: "Examples/PolicyExample"),
        .target(name: "TestSupport", dependencies: ["PostgresClient", "Planning", "ObjectModel", "SQLBuilding"], path: "Tests/TestSupport"),
        .testTarget(name: "SQLBuildingTests", dependencies: ["SQLBuilding"]),
        .testTarget(name: "JSONRenderingTests", dependencies: ["JSONRendering"]),
        .testTarget(name: "ObjectModelTests", dependencies: ["ObjectModel", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "MappingTests", dependencies: ["Mapping", "ObjectModel", "SQLBuilding", "PostgresClient", "TestSupport"]),
        .testTarget(name: "PlanningTests", dependencies: ["Planning", "Mapping", "ObjectModel", "SQLBuilding", "TestSupport"], exclude: ["Expectations"]),
        .testTarget(name: "PostgresClientTests", dependencies: ["PostgresClient", "SQLBuilding", "TestSupport"]),
        .testTarget(
            name: "EngineTests",
            dependencies: ["Engine", "Planning", "Mapping", "ObjectModel", "SQLBuilding", "PostgresClient", "TestSupport", "ExamplePolicies"]
        ),
        // Runs the built binary; the output formatting is unit-tested against OrchestratorCLI directly.
        .testTarget(name: "CLITests", dependencies: ["OrchestratorCLI", "Engine", "ObjectModel", "SQLBuilding", "PostgresClient", "TestSupport"]),
    ]
)
