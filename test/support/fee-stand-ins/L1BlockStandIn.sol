// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// STAND-IN (a fake, for tests only) for the OP stack's L1Block predeploy (0x4200000000000000000000000000000000000015).
/// Anvil's op mode reads this address's STORAGE to charge the L1 data fee but has no code there; this contract only
/// gives that storage the predeploy's getters. The state variables are declared in the predeploy's storage order, so
/// slot 1 = basefee, slot 3 packs sequenceNumber (low 8 bytes), blobBaseFeeScalar (next 4), baseFeeScalar (next 4),
/// slot 7 = blobBaseFee. Written for this repository from the documented layout; not the real predeploy's bytecode.
contract L1BlockStandIn {
    uint64 public number;
    uint64 public timestamp;
    uint256 public basefee;
    bytes32 public hash;
    uint64 public sequenceNumber;
    uint32 public blobBaseFeeScalar;
    uint32 public baseFeeScalar;
    bytes32 public batcherHash;
    uint256 public l1FeeOverhead;
    uint256 public l1FeeScalar;
    uint256 public blobBaseFee;
}
