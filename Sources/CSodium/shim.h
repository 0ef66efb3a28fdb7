// libsodium, for OwnTracks' encrypted payloads (crypto_secretbox: XSalsa20-Poly1305), which
// swift-crypto does not offer.
#ifndef FENCEPOST_CSODIUM_SHIM_H
#define FENCEPOST_CSODIUM_SHIM_H
#include <sodium.h>
#endif
