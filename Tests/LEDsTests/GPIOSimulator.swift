#if canImport(Glibc)
import Glibc
#endif
import XCTest

/// A gpio-sim chip made through configfs (Linux ≥ 5.17, root), whose output pads can be
/// read back from sysfs. Where the kernel has no gpio-sim (the build machines have no
/// GPIO character devices at all), `make` throws XCTSkip with the reason, which XCTest
/// prints.
struct GPIOSimulator {
    static let configfs = "/sys/kernel/config/gpio-sim"

    let directory: String
    let chipPath: String
    let padDirectory: String

    static func make(lines: Int) throws -> GPIOSimulator {
        if access(configfs, F_OK) != 0 {
            // It may only need loading, and configfs mounting; both harmless where gpio-sim
            // is absent or we are not root.
            _ = system("modprobe gpio-sim >/dev/null 2>&1")
            if access(configfs, F_OK) != 0 {
                _ = system("mount -t configfs configfs /sys/kernel/config >/dev/null 2>&1")
            }
        }
        guard access(configfs, W_OK) == 0 else {
            let chips = directoryEntries("/dev").filter { $0.hasPrefix("gpiochip") }.sorted()
            throw XCTSkip("no gpio-sim (\(configfs) \(access(configfs, F_OK) == 0 ? "not writable: not root" : "absent: kernel without CONFIG_GPIO_SIM or configfs not mounted")); GPIO character devices here: \(chips.isEmpty ? "none" : chips.joined(separator: " ")). The QEMU rig runs this test on a real kernel.")
        }
        let directory = "\(configfs)/beacon-gateway-test-\(getpid())"
        guard mkdir(directory, 0o755) == 0, mkdir("\(directory)/bank0", 0o755) == 0 else {
            throw XCTSkip("cannot create a gpio-sim chip in \(directory): \(String(cString: strerror(errno)))")
        }
        var sim = GPIOSimulator(directory: directory, chipPath: "", padDirectory: "")
        do {
            try writeFile("\(directory)/bank0/num_lines", "\(lines)")
            try writeFile("\(directory)/live", "1")
            let device = try readFile("\(directory)/dev_name")
            let chip = try readFile("\(directory)/bank0/chip_name")
            sim = GPIOSimulator(directory: directory, chipPath: "/dev/\(chip)", padDirectory: "/sys/devices/platform/\(device)/\(chip)")
        } catch {
            sim.remove()
            throw error
        }
        return sim
    }

    /// The simulated pads (what an LED would see) of `offsets`: `true` = high.
    func pads(_ offsets: [Int]) throws -> [Bool] {
        try offsets.map { try GPIOSimulator.readFile("\(padDirectory)/sim_gpio\($0)/value") == "1" }
    }

    func remove() {
        try? GPIOSimulator.writeFile("\(directory)/live", "0")
        rmdir("\(directory)/bank0")
        rmdir(directory)
    }

    struct FileError: Error, CustomStringConvertible {
        var description: String
    }

    static func writeFile(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY)
        guard fd >= 0 else { throw FileError(description: "open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let written = text.withCString { write(fd, $0, strlen($0)) }
        guard written == text.utf8.count else { throw FileError(description: "write \(path): \(String(cString: strerror(errno)))") }
    }

    static func readFile(_ path: String) throws -> String {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { throw FileError(description: "open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 256)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count >= 0 else { throw FileError(description: "read \(path): \(String(cString: strerror(errno)))") }
        let text = String(decoding: buffer.prefix(count), as: UTF8.self)
        return String(text.filter { !$0.isWhitespace })
    }

    static func directoryEntries(_ path: String) -> [String] {
        guard let directory = opendir(path) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
