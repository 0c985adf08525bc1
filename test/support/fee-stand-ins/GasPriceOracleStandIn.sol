// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

interface IL1Block {
    function basefee() external view returns (uint256);
    function blobBaseFee() external view returns (uint256);
    function baseFeeScalar() external view returns (uint32);
    function blobBaseFeeScalar() external view returns (uint32);
}

/// STAND-IN (a fake, for tests only) for the OP stack's GasPriceOracle predeploy (0x420000000000000000000000000000000000000F)
/// on Anvil 1.7.1 started with `--network optimism --hardfork ecotone`. The real predeploy's bytecode is not available
/// offline; this one is written for this repository.
///
/// It quotes what that node CHARGES, which is the Fjord formula (op-revm charges it although the hardfork flag says
/// ecotone), from the L1Block predeploy's values, on the bytes passed AS GIVEN:
///   estimatedSize = max(100 * 10^6, -42_585_600 + 836_500 * flzCompressLen(data))
///   fee = estimatedSize * (16 * baseFeeScalar * l1BaseFee + blobBaseFeeScalar * blobBaseFee) / 10^12
/// where flzCompressLen is the length of the FastLZ (level 1) compression of the bytes. Measured on this machine:
/// Anvil charges exactly this on the transaction's SIGNED, enveloped bytes (what eth_getRawTransactionByHash returns),
/// to the wei; small transactions hit the 100-byte floor (1,600 units of L1 data gas), larger or less compressible ones
/// pay more (test/integration/network-anvil.test.ts).
/// Unlike the real Fjord oracle, it adds NO 68-byte signature padding: the service records a landed transaction's fee
/// by passing the signed raw transaction, and that quote must equal the charge to the wei. An estimate on unsigned
/// bytes therefore quotes less than the charge (the signature is missing); the service holds estimates with a margin.
contract GasPriceOracleStandIn {
    IL1Block internal constant L1_BLOCK = IL1Block(0x4200000000000000000000000000000000000015);
    uint256 public constant DECIMALS = 6;
    /// Fjord's linear regression over the FastLZ size (scaled by 10^6), and its floor (100 bytes).
    int256 internal constant COST_INTERCEPT = -42_585_600;
    uint256 internal constant COST_FASTLZ_COEF = 836_500;
    uint256 internal constant MIN_TRANSACTION_SIZE = 100;

    function decimals() external pure returns (uint256) {
        return DECIMALS;
    }

    function isEcotone() external pure returns (bool) {
        return true;
    }

    function isFjord() external pure returns (bool) {
        return true;
    }

    function l1BaseFee() public view returns (uint256) {
        return L1_BLOCK.basefee();
    }

    function blobBaseFee() public view returns (uint256) {
        return L1_BLOCK.blobBaseFee();
    }

    function baseFeeScalar() public view returns (uint32) {
        return L1_BLOCK.baseFeeScalar();
    }

    function blobBaseFeeScalar() public view returns (uint32) {
        return L1_BLOCK.blobBaseFeeScalar();
    }

    /// L1 data gas of `data` as given (Fjord): estimatedSize * 16 / 10^6.
    function getL1GasUsed(bytes calldata data) external pure returns (uint256) {
        return (_estimatedSize(flzCompressLen(data)) * 16) / 10 ** DECIMALS;
    }

    /// The L1 data fee (wei) of a transaction whose enveloped bytes are `data` (Fjord, no signature padding).
    function getL1Fee(bytes calldata data) external view returns (uint256) {
        uint256 feeScaled = uint256(baseFeeScalar()) * 16 * l1BaseFee() + uint256(blobBaseFeeScalar()) * blobBaseFee();
        return (_estimatedSize(flzCompressLen(data)) * feeScaled) / 10 ** (DECIMALS * 2);
    }

    /// Fjord's size estimate (scaled by 10^6) from a FastLZ compressed length, floored at MIN_TRANSACTION_SIZE bytes.
    function _estimatedSize(uint256 fastLzSize) internal pure returns (uint256) {
        int256 estimated = COST_INTERCEPT + int256(COST_FASTLZ_COEF * fastLzSize);
        int256 floor = int256(MIN_TRANSACTION_SIZE * 10 ** DECIMALS);
        return uint256(estimated < floor ? floor : estimated);
    }

    /// Length of the FastLZ level-1 compression of `b` (what op-revm's Fjord L1 cost counts), without producing the
    /// output: literal runs cost 1 byte per 32 plus the bytes, matches 2 or 3 bytes (plus 3 per 262 of length).
    function flzCompressLen(bytes calldata b) public pure returns (uint256) {
        uint256 n = b.length;
        uint256 idxLimit = n < 13 ? 0 : n - 13;
        uint256[] memory htab = new uint256[](8192);
        uint256 idx = 2;
        uint256 anchor = 0;
        uint256 size = 0;
        unchecked {
            while (idx < idxLimit) {
                uint256 r;
                for (;;) {
                    uint256 seq = _u24(b, idx);
                    uint256 h = _hash(seq);
                    r = htab[h];
                    htab[h] = idx;
                    uint256 distance = idx - r;
                    if (idx >= idxLimit) break;
                    ++idx;
                    if (distance < 8192 && seq == _u24(b, r)) break;
                }
                if (idx >= idxLimit) break;
                --idx;
                if (idx > anchor) size = _literals(idx - anchor, size);
                uint256 len = _cmp(b, r + 3, idx + 3, idxLimit + 9);
                size = _match(len, size);
                idx = _setNextHash(htab, b, idx + len);
                idx = _setNextHash(htab, b, idx);
                anchor = idx;
            }
            return _literals(n - anchor, size);
        }
    }

    function _u24(bytes calldata b, uint256 p) private pure returns (uint256) {
        return uint256(uint8(b[p])) | (uint256(uint8(b[p + 1])) << 8) | (uint256(uint8(b[p + 2])) << 16);
    }

    /// Fibonacci hash of a 24-bit value into 13 bits (the product fits 64 bits, as in the reference).
    function _hash(uint256 v) private pure returns (uint256) {
        unchecked {
            return ((2654435769 * v) >> 19) & 0x1fff;
        }
    }

    function _literals(uint256 r, uint256 size) private pure returns (uint256) {
        unchecked {
            size += 0x21 * (r / 0x20);
            r %= 0x20;
            return r != 0 ? size + r + 1 : size;
        }
    }

    function _match(uint256 l, uint256 size) private pure returns (uint256) {
        unchecked {
            --l;
            size += 3 * (l / 262);
            l %= 262;
            return l >= 6 ? size + 3 : size + 2;
        }
    }

    function _setNextHash(uint256[] memory htab, bytes calldata b, uint256 idx) private pure returns (uint256) {
        htab[_hash(_u24(b, idx))] = idx;
        unchecked {
            return idx + 1;
        }
    }

    /// The match extension the reference counts past the 3 hashed bytes: the common run of b[p..] and b[q..] PLUS the
    /// first differing byte (so never 0), or e - q when the run reaches e (q < e; reads stay inside b: e = len - 4).
    function _cmp(bytes calldata b, uint256 p, uint256 q, uint256 e) private pure returns (uint256) {
        unchecked {
            uint256 n = e - q;
            for (uint256 l = 0; l < n; ++l) if (b[p + l] != b[q + l]) return l + 1;
            return n;
        }
    }
}
