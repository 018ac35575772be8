// swift-tools-version:6.0
import PackageDescription

// Layers, lowest first; a target depends only on targets above it in this list:
//   SystemCalls    interrupted calls repeated, whole writes, bounded reads, atomic file replacement
//   EventLoop      monotonic time, injectable clocks, the poll(2) reactor
//   JSONText       the one-line JSON writer (event bodies, heartbeat, status, CLI output)
//   HCI            H4 packets, typed commands and events, btsnoop format, TransportSpec
//   BluetoothCrypto  the Core specification's security functions: AES-128, AES-CMAC, P-256, f4 f5 f6 g2 ah;
//                  SHA-256 and HMAC-SHA256 (+ COpenSSL)
//   HCITransport   user-channel socket, TCP, serial, btsnoop replay (+ CBluetooth headers)
//   Host           command flow, controller bring-up and recovery, scanning, connect scheduling
//   SecurityManager  SMP: the LE Secure Connections pairing responder (sans-IO)
//   Advertisements  what devices advertise and who they are: AD decoding, iBeacon, Eddystone,
//                  tag identities, IRKs and RPA resolution, tag matching; no persons
//   PresenceProof  the proof protocol on the wire: challenge and response, tag and master keys,
//                  the service's UUIDs, why a handshake failed; no persons
//   AttendanceEvents  the event model: AttendanceEvent and its JSON body, idempotency keys,
//                  timestamps, the server's URL, the clock's sync state, the door's mode
//   DoorAdvertising  the door's own beacon: its payload and the sans-IO sequence that puts it on air
//   GatewayCore    the person-level decisions: presence, connection wishes, the proof book, DoorCore
//   ProofTag       the tag side of the proof protocol: the Presence Proof service on the GATT server
//   Presentation   what the CLI shows: the scan advertiser table, its text and JSON lines
//   LEDs           the LED pattern engine and libgpiod lines (+ CGpiod)
//   Config         TOML configuration and its validation, into the host's, core's and LEDs' own types
//   Store          SQLite: the outbox, the sequence and persisted presence state (+ CSQLite); each
//                  event's delivery per sink and the OutboxSink protocol every sink conforms to
//   Fleet          heartbeat body, metrics exposition, status report, the local endpoints,
//                  the roster's decisions (RosterSync) and the answer it takes (RosterAnswer)
//   Forwarder      the outbox's sink "server": delivery to the server over libcurl (+ CCurl); the
//                  heartbeat and roster requests
//   Journal        log lines for the journal, sd_notify
//   SiteBus        the site's MQTT bus (SPEC §18): the session with the broker over libmosquitto
//                  (+ CMosquitto), what is published where
//   Enrolment      SPEC §15's window as a sans-IO machine: advertising, the phone's connection, its pairing
//   HostDrivers    the controller on the loop: ControllerSession, ControllerDriver, the connect,
//                  data-path, GATT server and proof drivers (used by `run` and the controller commands);
//                  no persons: it does not depend on GatewayCore
//   Agent          `run`: the layers wired into the door agent
//   BeaconGatewayCLI  the `beacon-gateway` executable
let package = Package(
    name: "beacon-gateway",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "beacon-gateway", targets: ["BeaconGatewayCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // BlueZ through its headers only: socket constants and structs, nothing linked.
        .systemLibrary(name: "CBluetooth", path: "Sources/CBluetooth"),
        // OpenSSL's libcrypto, through BluetoothCrypto only: AES-128 (IRKs), AES-CMAC and
        // P-256 (pairing), SHA-256 and HMAC-SHA256 (keys, proofs). The release links it
        // anyway for libcurl's TLS; a second crypto library would only add megabytes.
        .systemLibrary(name: "COpenSSL", path: "Sources/COpenSSL"),

        // Monotonic time, injectable clocks and the poll(2) reactor everything runs on.
        .systemLibrary(name: "CTimex", path: "Sources/CTimex"),
        // Interrupted calls repeated, whole writes, bounded reads and atomic file
        // replacement, said once (plain Glibc; no package needed for four functions).
        .target(name: "SystemCalls", path: "Sources/SystemCalls"),
        .target(name: "EventLoop", dependencies: ["CTimex", "SystemCalls"], path: "Sources/EventLoop"),
        .target(name: "JSONText", path: "Sources/JSONText"),
        // The one seeded generator (SplitMix64): retry jitter, fuzzers, benchmarks, tests.
        .target(name: "SplitMix", path: "Sources/SplitMix"),
        .target(name: "HCI", path: "Sources/HCI"),
        .target(name: "HCITransport", dependencies: ["HCI", "EventLoop", "CBluetooth", "SystemCalls"], path: "Sources/HCITransport"),
        .target(name: "BluetoothCrypto", dependencies: ["HCI", "COpenSSL"], path: "Sources/BluetoothCrypto"),
        .target(name: "Host", dependencies: ["HCI", "EventLoop"], path: "Sources/Host"),
        .target(name: "SecurityManager", dependencies: ["BluetoothCrypto", "HCI", "EventLoop"], path: "Sources/SecurityManager"),
        .target(name: "Advertisements", dependencies: ["HCI", "EventLoop", "BluetoothCrypto"], path: "Sources/Advertisements"),
        .target(name: "PresenceProof", dependencies: ["HCI", "BluetoothCrypto"], path: "Sources/PresenceProof"),
        .target(
            name: "AttendanceEvents",
            dependencies: ["HCI", "JSONText", "BluetoothCrypto", "Advertisements"],
            path: "Sources/AttendanceEvents"
        ),
        .target(name: "DoorAdvertising", dependencies: ["HCI", "Host", "Advertisements"], path: "Sources/DoorAdvertising"),
        .target(
            name: "GatewayCore",
            dependencies: ["HCI", "EventLoop", "BluetoothCrypto", "Advertisements", "PresenceProof", "AttendanceEvents"],
            path: "Sources/GatewayCore"
        ),
        .target(name: "ProofTag", dependencies: ["EventLoop", "Host", "PresenceProof"], path: "Sources/ProofTag"),
        .target(name: "Presentation", dependencies: ["Advertisements", "HCI", "EventLoop", "JSONText"], path: "Sources/Presentation"),
        .target(
            name: "Config",
            dependencies: ["Advertisements", "PresenceProof", "AttendanceEvents", "GatewayCore", "HCI", "Host", "LEDs", "SystemCalls"],
            path: "Sources/Config"
        ),
        // C libraries through module maps only; no C type leaks above the file that wraps it.
        .systemLibrary(name: "CSQLite", path: "Sources/CSQLite"),
        .systemLibrary(name: "CCurl", path: "Sources/CCurl"),
        .systemLibrary(name: "CGpiod", path: "Sources/CGpiod"),
        .systemLibrary(name: "CMosquitto", path: "Sources/CMosquitto"),
        .target(name: "Store", dependencies: ["CSQLite", "EventLoop", "SystemCalls"], path: "Sources/Store"),
        .target(name: "Forwarder", dependencies: ["CCurl", "Store", "EventLoop", "AttendanceEvents", "SplitMix", "Fleet"], path: "Sources/Forwarder"),
        .target(name: "LEDs", dependencies: ["CGpiod", "EventLoop"], path: "Sources/LEDs"),
        .target(name: "Journal", dependencies: ["EventLoop", "SystemCalls"], path: "Sources/Journal"),
        .target(name: "SiteBus", dependencies: ["CMosquitto", "EventLoop", "JSONText", "SplitMix", "AttendanceEvents", "Store"], path: "Sources/SiteBus"),
        // GNU extensions Glibc's module hides (accept4, adjtimex), as inline wrappers.
        .systemLibrary(name: "CLinux", path: "Sources/CLinux"),
        .target(name: "Fleet", dependencies: ["EventLoop", "BluetoothCrypto", "AttendanceEvents", "JSONText", "CLinux", "SystemCalls"], path: "Sources/Fleet"),
        .target(
            name: "Enrolment",
            dependencies: ["EventLoop", "HCI", "Host", "BluetoothCrypto", "SecurityManager", "Advertisements"],
            path: "Sources/Enrolment"
        ),
        .target(
            name: "HostDrivers",
            dependencies: ["EventLoop", "HCI", "HCITransport", "Host", "PresenceProof", "Journal", "JSONText"],
            path: "Sources/HostDrivers"
        ),
        .target(
            name: "Agent",
            dependencies: [
                "EventLoop", "HCI", "HCITransport", "Host", "Advertisements", "AttendanceEvents", "DoorAdvertising", "GatewayCore",
                "Config", "Store", "Forwarder", "LEDs", "Journal", "Fleet",
                "HostDrivers", "SystemCalls", "Enrolment", "SecurityManager", "BluetoothCrypto", "SiteBus", "PresenceProof",
            ],
            path: "Sources/Agent"
        ),
        .executableTarget(
            name: "BeaconGatewayCLI",
            dependencies: [
                "EventLoop", "JSONText", "HCI", "HCITransport", "Host", "Advertisements", "PresenceProof", "AttendanceEvents",
                "GatewayCore", "Presentation", "Config",
                "Store", "Forwarder", "LEDs", "Journal", "Fleet", "HostDrivers", "Agent", "SystemCalls",
                "BluetoothCrypto", "SecurityManager", "Enrolment", "ProofTag", "SiteBus",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/BeaconGatewayCLI"
        ),
        .executableTarget(
            name: "ConfigFuzz",
            dependencies: ["Config", "SplitMix"],
            path: "Benchmarks/ConfigFuzz"
        ),
        .executableTarget(
            name: "PresenceBenchmark",
            dependencies: ["GatewayCore", "Advertisements", "EventLoop", "SplitMix"],
            path: "Benchmarks/PresenceBenchmark"
        ),

        .testTarget(name: "SystemCallsTests", dependencies: ["SystemCalls"], path: "Tests/SystemCallsTests"),
        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop"], path: "Tests/EventLoopTests"),
        .testTarget(name: "HCITests", dependencies: ["HCI", "SplitMix"], path: "Tests/HCITests"),
        .testTarget(name: "HCITransportTests", dependencies: ["HCITransport"], path: "Tests/HCITransportTests"),
        .testTarget(name: "HostTests", dependencies: ["Host", "SplitMix"], path: "Tests/HostTests"),
        .testTarget(name: "BluetoothCryptoTests", dependencies: ["BluetoothCrypto"], path: "Tests/BluetoothCryptoTests"),
        .testTarget(
            name: "ProofTagTests", dependencies: ["ProofTag", "Host", "PresenceProof", "Advertisements", "EventLoop", "SplitMix"],
            path: "Tests/ProofTagTests"
        ),
        .testTarget(name: "SecurityManagerTests", dependencies: ["SecurityManager", "SplitMix"], path: "Tests/SecurityManagerTests"),
        // Advertising frames and hex literals the Advertisements, PresenceProof, GatewayCore
        // and Presentation tests share; never in the product.
        .target(name: "AdvertisingFixtures", path: "Tests/AdvertisingFixtures"),
        .testTarget(
            name: "AdvertisementsTests", dependencies: ["Advertisements", "AdvertisingFixtures", "SplitMix"], path: "Tests/AdvertisementsTests"
        ),
        .testTarget(
            name: "PresenceProofTests", dependencies: ["PresenceProof", "HCI", "EventLoop", "AdvertisingFixtures", "SplitMix"], path: "Tests/PresenceProofTests"
        ),
        .testTarget(name: "DoorAdvertisingTests", dependencies: ["DoorAdvertising"], path: "Tests/DoorAdvertisingTests"),
        .testTarget(
            name: "GatewayCoreTests",
            dependencies: ["GatewayCore", "Advertisements", "PresenceProof", "AttendanceEvents", "BluetoothCrypto", "AdvertisingFixtures", "SplitMix"],
            path: "Tests/GatewayCoreTests"
        ),
        .testTarget(
            name: "PresentationTests", dependencies: ["Presentation", "Advertisements", "AdvertisingFixtures", "SplitMix"],
            path: "Tests/PresentationTests"
        ),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "GatewayCore", "Advertisements", "PresenceProof", "HCI", "Host", "ConfigFuzz", "SplitMix"], path: "Tests/ConfigTests"),
        .testTarget(name: "StoreTests", dependencies: ["Store"], path: "Tests/StoreTests"),
        .testTarget(name: "ForwarderTests", dependencies: ["Forwarder", "Fleet", "SplitMix"], path: "Tests/ForwarderTests"),
        .testTarget(name: "LEDsTests", dependencies: ["LEDs"], path: "Tests/LEDsTests"),
        // A datagram socket standing in for journald or the service manager; never in the product.
        .target(name: "JournalFixtures", path: "Tests/JournalFixtures"),
        .testTarget(name: "JournalTests", dependencies: ["Journal", "JournalFixtures"], path: "Tests/JournalTests"),
        .testTarget(name: "FleetTests", dependencies: ["Fleet"], path: "Tests/FleetTests"),
        .testTarget(name: "SiteBusTests", dependencies: ["SiteBus", "EventLoop"], path: "Tests/SiteBusTests"),
        .testTarget(name: "EnrolmentTests", dependencies: ["Enrolment", "SecurityManager", "Advertisements", "SplitMix"], path: "Tests/EnrolmentTests"),
        .target(name: "ControllerFixtures", dependencies: ["HCI", "HCITransport"], path: "Tests/ControllerFixtures"),
        .testTarget(name: "HostDriversTests", dependencies: ["HostDrivers", "PresenceProof", "ControllerFixtures"], path: "Tests/HostDriversTests"),
        .testTarget(name: "AgentTests", dependencies: ["Agent", "DoorAdvertising", "PresenceProof", "GatewayCore", "ControllerFixtures", "JournalFixtures"], path: "Tests/AgentTests"),
    ]
)
