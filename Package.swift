// swift-tools-version:6.0
import PackageDescription

// Layers, lowest first; a target depends only on targets above it in this list:
//   EventLoop      monotonic time, injectable clocks, the poll(2) reactor
//   HCI            H4 packets, typed commands and events, btsnoop format
//   HCITransport   user-channel socket, TCP, serial, btsnoop replay (+ CBluetooth headers)
//   Host           command flow, controller bring-up and recovery, scanning
//   GatewayCore    advertisement decoding, tag matching, (presence, proofs)
//   Config         TOML configuration and its validation
//   BeaconGatewayCLI  the `beacon-gateway` executable
let package = Package(
    name: "beacon-gateway",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "beacon-gateway", targets: ["BeaconGatewayCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
    ],
    targets: [
        // BlueZ through its headers only: socket constants and structs, nothing linked.
        .systemLibrary(name: "CBluetooth", path: "Sources/CBluetooth"),

        // Monotonic time, injectable clocks and the poll(2) reactor everything runs on.
        .target(name: "EventLoop", path: "Sources/EventLoop"),
        .target(name: "HCI", path: "Sources/HCI"),
        .target(name: "HCITransport", dependencies: ["HCI", "EventLoop", "CBluetooth"], path: "Sources/HCITransport"),
        .target(name: "Host", dependencies: ["HCI", "EventLoop"], path: "Sources/Host"),
        .target(
            name: "GatewayCore",
            dependencies: [
                "HCI", "EventLoop",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Sources/GatewayCore"
        ),
        .target(
            name: "Config",
            dependencies: ["GatewayCore", .product(name: "TOMLKit", package: "TOMLKit")],
            path: "Sources/Config"
        ),
        .executableTarget(
            name: "BeaconGatewayCLI",
            dependencies: [
                "EventLoop", "HCI", "HCITransport", "Host", "GatewayCore", "Config",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            path: "Sources/BeaconGatewayCLI"
        ),

        .testTarget(name: "EventLoopTests", dependencies: ["EventLoop"], path: "Tests/EventLoopTests"),
        .testTarget(name: "HCITests", dependencies: ["HCI"], path: "Tests/HCITests"),
        .testTarget(name: "HCITransportTests", dependencies: ["HCITransport"], path: "Tests/HCITransportTests"),
        .testTarget(name: "HostTests", dependencies: ["Host"], path: "Tests/HostTests"),
        .testTarget(name: "GatewayCoreTests", dependencies: ["GatewayCore"], path: "Tests/GatewayCoreTests"),
        .testTarget(name: "ConfigTests", dependencies: ["Config"], path: "Tests/ConfigTests"),
    ]
)
