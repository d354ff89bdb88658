import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SavedPlan {
    /// The largest saved plan read: far above any plan `plan --out` writes (the chain through
    /// every version of the corpus's WooCommerce model saves 125 KB), so a bigger file is not
    /// one of them.
    public static let maximumFileBytes = 16 << 20

    /// Reads a plan `plan --out` wrote. Refused, naming the file, with nothing read beyond
    /// what the checks need: a path that is not a regular file (a directory, a FIFO, which is
    /// never waited on, a device), a file over `maximumFileBytes`, one that is not such a plan
    /// or has another format, and one with a key written twice in an object (a reader keeping
    /// the last would see another plan than the one applied).
    public static func read(from path: String) throws -> SavedPlan {
        let data = try boundedContents(of: path)
        if let format = (try? JSONSerialization.jsonObject(with: data)).flatMap({ ($0 as? [String: Any])?["format"] as? Int }),
           format != currentFormat {
            throw SavedPlanUnreadable(file: path, reason: "it has format \(format), and this orchestrator reads format \(currentFormat) (run plan --out again)")
        }
        let plan: SavedPlan
        do {
            plan = try JSONDecoder().decode(SavedPlan.self, from: data)
        } catch let error as DecodingError {
            throw SavedPlanUnreadable(file: path, reason: "it is not a plan written by `orchestrator plan --out` (\(Self.explain(error)))")
        } catch {
            throw SavedPlanUnreadable(file: path, reason: "it is not a plan written by `orchestrator plan --out` (\(error.localizedDescription))")
        }
        if let duplicate = JSONDuplicateKeys.first(in: data) {
            throw SavedPlanUnreadable(
                file: path, reason: "the key '\(duplicate.key)' is written twice in one object (line \(duplicate.line)); `orchestrator plan --out` never does that (run it again)"
            )
        }
        return plan.upgradedFromLayoutThree()
    }

    /// A plan saved by a release before metadata layout 4 (no step digests): its heavyweight
    /// steps made and dropped the staging schema's `_checkpoint` table, whose rows are now in
    /// `orchestrator.checkpoints`; those two statements are read as they are planned now, so
    /// that the plan still applies when nothing else changed.
    func upgradedFromLayoutThree() -> SavedPlan {
        var plan = self
        for index in plan.steps.indices where plan.steps[index].digest == nil && plan.steps[index].kind == "heavyweight" {
            plan.steps[index].statements = plan.steps[index].statements.compactMap { statement in
                let firstLine = statement.prefix { $0 != "\n" }
                if firstLine.hasPrefix("CREATE TABLE "), firstLine.hasSuffix(#"."_checkpoint" ("#) { return nil }
                guard statement.hasPrefix("DROP TABLE "), let range = statement.range(of: #", "[^"]+"\."_checkpoint""#, options: .regularExpression) else {
                    return statement
                }
                return statement.replacingCharacters(in: range, with: "")
            }
        }
        return plan
    }

    /// 1. Open without blocking (a FIFO with no writer would wait for one).
    /// 2. What was opened must be a regular file of at most `maximumFileBytes`.
    /// 3. Read it, stopping past the bound should it grow meanwhile.
    static func boundedContents(of path: String) throws -> Data {
        func refused(_ reason: String) -> SavedPlanUnreadable { SavedPlanUnreadable(file: path, reason: reason) }
        let descriptor = openFile(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code = errno
            throw refused("it cannot be read (\(code == EISDIR ? "it is a directory" : String(cString: strerror(code))))")
        }
        defer { closeFile(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw refused("it cannot be read (\(String(cString: strerror(errno))))") }
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: throw refused("it is a directory, not a file")
        case S_IFIFO: throw refused("it is not a regular file (a FIFO); a saved plan is a file `plan --out` wrote")
        default: throw refused("it is not a regular file (a device or socket); a saved plan is a file `plan --out` wrote")
        }
        let limit = maximumFileBytes
        let tooLarge = "it is larger than \(limit >> 20) MiB, the most a saved plan may hold; `orchestrator plan --out` writes far smaller ones"
        guard Int(info.st_size) <= limit else { throw refused(tooLarge) }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while data.count <= limit {
            let count = chunk.withUnsafeMutableBytes { readBytes(descriptor, $0.baseAddress!, $0.count) }
            if count == 0 { break }
            guard count > 0 else {
                if errno == EINTR { continue }
                throw refused("it cannot be read (\(String(cString: strerror(errno))))")
            }
            data.append(contentsOf: chunk[0..<count])
        }
        guard data.count <= limit else { throw refused(tooLarge) }
        return data
    }
}

// At file scope: inside `SavedPlan`, `read` and `open` would name its own members.
private func openFile(_ path: String, _ flags: Int32) -> Int32 { open(path, flags) }
private func readBytes(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int { read(descriptor, buffer, count) }
private func closeFile(_ descriptor: Int32) { _ = close(descriptor) }
