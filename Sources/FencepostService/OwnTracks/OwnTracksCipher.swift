import CSodium
import Foundation

/// OwnTracks' payload encryption: `{"_type":"encrypted","data":"BASE64"}`, where the data is a
/// 24-byte nonce and then libsodium's secretbox (XSalsa20-Poly1305) of the JSON message. The
/// key is the secret the user typed into the app, its UTF-8 bytes in a zeroed 32-byte buffer
/// (cut at 32), as the apps and the OwnTracks Recorder make it.
enum OwnTracksCipher {
    /// The message inside `data` under `secret`, or nil when it does not open (a wrong key, a
    /// forged or cut message, data that is not base64).
    static func open(_ data: String, secret: String) -> [UInt8]? {
        guard sodium_init() >= 0, let sealed = Data(base64Encoded: data, options: .ignoreUnknownCharacters) else {
            return nil
        }
        let nonceBytes = Int(crypto_secretbox_NONCEBYTES)
        let macBytes = Int(crypto_secretbox_MACBYTES)
        guard sealed.count >= nonceBytes + macBytes else { return nil }
        var key = [UInt8](repeating: 0, count: Int(crypto_secretbox_KEYBYTES))
        for (index, byte) in secret.utf8.prefix(key.count).enumerated() { key[index] = byte }
        let bytes = [UInt8](sealed)
        var message = [UInt8](repeating: 0, count: bytes.count - nonceBytes - macBytes)
        let opened = bytes.withUnsafeBufferPointer { bytes in
            message.withUnsafeMutableBufferPointer { message in
                crypto_secretbox_open_easy(
                    message.baseAddress ?? UnsafeMutablePointer(mutating: bytes.baseAddress!),
                    bytes.baseAddress! + nonceBytes, UInt64(bytes.count - nonceBytes), bytes.baseAddress!, key)
            }
        }
        return opened == 0 ? message : nil
    }
}
