import Foundation
import Testing
@testable import ObjectModel

/// `<Package>.versions.yaml` beside an `.xcdatamodeld` declares its order of versions.
@Suite struct XcodeVersionOrderTests {
    static func package(in folder: String, versions: [String], order: String?) throws -> String {
        let package = (folder as NSString).appendingPathComponent("Partner.xcdatamodeld")
        for version in versions {
            let dir = (package as NSString).appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            try """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0"><entity name="Item" syncable="YES"><attribute name="name" optional="YES" attributeType="String"/></entity></model>
                """.write(toFile: (dir as NSString).appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        }
        if let order { try order.write(toFile: (folder as NSString).appendingPathComponent("Partner.versions.yaml"), atomically: true, encoding: .utf8) }
        return package
    }

    static func withFolder<T>(_ body: (String) throws -> T) throws -> T {
        let folder = NSTemporaryDirectory() + "version-order-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        return try body(folder)
    }

    @Test func withoutAFileVersionsAreOrderedByNameAndTheOrderIsNotDeclared() throws {
        try Self.withFolder { folder in
            let model = try XcodeModelLoader.load(package: try Self.package(in: folder, versions: ["AppPartner 5", "AppFolio v1.4"], order: nil))
            #expect(model.versionNames == ["AppFolio v1.4", "AppPartner 5"])
            #expect(!model.orderIsDeclared)
        }
    }

    @Test func theDeclaredOrderIsTheModelsOrder() throws {
        try Self.withFolder { folder in
            let path = try Self.package(in: folder, versions: ["AppPartner 5", "AppFolio v1.4"], order: "versions: [AppPartner 5, AppFolio v1.4]\n")
            let model = try XcodeModelLoader.load(package: path)
            #expect(model.versionNames == ["AppPartner 5", "AppFolio v1.4"])
            #expect(model.versions.map(\.name) == ["AppPartner 5", "AppFolio v1.4"])
            #expect(model.orderIsDeclared)
            #expect(model.currentVersionName == "AppFolio v1.4", "no .xccurrentversion: the last in the declared order")
        }
    }

    @Test(arguments: [
        ("versions: [AppPartner 5, AppFolio v1.4, Other]\n", "1:11: 'Other' is not a version of Partner.xcdatamodeld (its versions: AppFolio v1.4, AppPartner 5)"),
        ("versions: [AppPartner 5]\n", "1:11: every version must be listed, oldest first; missing: AppFolio v1.4"),
        ("versions: [AppPartner 5, AppPartner 5, AppFolio v1.4]\n", "1:11: version 'AppPartner 5' is listed twice"),
        ("order: [AppPartner 5]\n", "unknown key 'order'"),
    ])
    func aWrongOrderFileIsAnErrorNamingTheFileAndLine(text: String, message: String) throws {
        try Self.withFolder { folder in
            let path = try Self.package(in: folder, versions: ["AppPartner 5", "AppFolio v1.4"], order: text)
            do {
                _ = try XcodeModelLoader.load(package: path)
                Issue.record("loaded a wrong order file")
            } catch let error as ModelLoadError {
                let description = "\(error)"
                #expect(description.contains((folder as NSString).appendingPathComponent("Partner.versions.yaml")), "\(description)")
                #expect(description.contains(message), "\(description)")
            }
        }
    }
}
