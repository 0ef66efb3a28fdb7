import Crypto
import FencepostStore
import Foundation
import Hummingbird
import Synchronization

/// Resolves bearer tokens (or, for OwnTracks, the basic-auth password; for OsmAnd clients
/// that cannot set headers, a `token` query parameter) against the store's hashed tokens, for
/// ``TokenAuthentication``.
///
/// A token found in the store is remembered for a second, so a busy device does not cost a
/// store read per request; a revoked token stops working within that second.
struct Authenticator: Sendable {
    let store: Store
    private let recent = RecentTokens()

    init(store: Store) {
        self.store = store
    }

    /// The caller of the token that came with the request; nil when none did, or the one that
    /// did is unknown or revoked. `query`: the request's query parameters, when a `token`
    /// parameter may stand for the header (nil: it may not).
    func caller(presentedWith request: Request, query: Parameters? = nil) async throws
        -> Caller?
    {
        guard let secret = Self.presentedSecret(request, query: query) else { return nil }
        if let caller = recent.caller(for: secret) { return caller }
        guard let (name, scope) = try await store.tokenScope(secret: secret) else { return nil }
        let caller = Caller(tokenName: name, scope: scope)
        recent.remember(caller, for: secret)
        return caller
    }

    /// The basic-auth user name, if the request used basic auth (OwnTracks sends its user).
    static func basicUser(_ request: Request) -> String? {
        basicCredentials(request)?.user
    }

    private static func presentedSecret(_ request: Request, query: Parameters?) -> String? {
        if let header = request.headers.firstValue(.authorization) {
            if let token = Self.credentials(in: header, scheme: "bearer ") { return String(Self.trimmed(token)) }
            if let credentials = basicCredentials(request) { return credentials.password }
        }
        guard let token = query?["token"], !token.isEmpty else { return nil }
        return String(token)
    }

    /// `text` without the spaces and tabs around it (Foundation's trimming, per request, costs
    /// more than the rest of a header's handling).
    private static func trimmed(_ text: Substring) -> Substring {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !blank($0) }), let last = text.lastIndex(where: { !blank($0) })
        else { return "" }
        return text[first...last]
    }

    /// What follows `scheme` (lowercase, with its space) in an Authorization header that starts
    /// with it in any case; nil for another scheme. Compared byte by byte: a phone posting
    /// once a second should not cost a lowercased copy of its header per request.
    private static func credentials(in header: String, scheme: StaticString) -> Substring? {
        let prefix = UnsafeBufferPointer(start: scheme.utf8Start, count: scheme.utf8CodeUnitCount)
        var bytes = header.utf8.makeIterator()
        for expected in prefix {
            guard let byte = bytes.next(), (0x41...0x5A).contains(byte) ? byte + 0x20 == expected : byte == expected
            else { return nil }
        }
        return header.dropFirst(prefix.count)
    }

    private static func basicCredentials(_ request: Request) -> (user: String, password: String)? {
        guard let header = request.headers.firstValue(.authorization),
            let encoded = Self.credentials(in: header, scheme: "basic "),
            let decoded = Base64.decode(Self.trimmed(encoded).utf8),
            let colon = decoded.firstIndex(of: UInt8(ascii: ":"))
        else { return nil }
        guard let user = String(validating: decoded[..<colon], as: UTF8.self),
            let password = String(validating: decoded[(colon + 1)...], as: UTF8.self)
        else { return nil }
        return (user, password)
    }
}

/// Tokens resolved in the last second, by the SHA-256 of their secret: the secrets themselves
/// are not kept, and a presented secret is never compared with a stored one byte by byte (a
/// lookup compares digests, whose prefixes an attacker cannot steer), as in the store.
private final class RecentTokens: Sendable {
    private let entries = Mutex<[SecretDigest: (caller: Caller, until: ContinuousClock.Instant)]>([:])
    private static let lifetime: Duration = .seconds(1)

    func caller(for secret: String) -> Caller? {
        let key = Self.digest(secret)
        return entries.withLock { entries in
            guard let entry = entries[key] else { return nil }
            guard entry.until > .now else {
                entries[key] = nil
                return nil
            }
            return entry.caller
        }
    }

    func remember(_ caller: Caller, for secret: String) {
        let key = Self.digest(secret)
        entries.withLock { entries in
            if entries.count > 10_000 { entries.removeAll() }  // bounded, whatever is presented
            entries[key] = (caller, .now + Self.lifetime)
        }
    }

    /// A secret's SHA-256 as four words (hashable, with no storage of its own), hashed from the
    /// secret's bytes where they are: no `Data` copies per request.
    private typealias SecretDigest = SIMD4<UInt64>

    private static func digest(_ secret: String) -> SecretDigest {
        var hash = SHA256()
        var secret = secret
        secret.withUTF8 { hash.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        return hash.finalize().withUnsafeBytes { bytes in
            SecretDigest(
                bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self),
                bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self))
        }
    }
}
