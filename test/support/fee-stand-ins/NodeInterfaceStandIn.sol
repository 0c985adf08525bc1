// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// STAND-IN (a FAKE, for tests only) for Arbitrum's NodeInterface (0x00000000000000000000000000000000000000C8). On an
/// Arbitrum node it is a virtual contract the node answers in eth_call; here it is code put there with anvil_setCode.
/// Anvil does not charge Arbitrum's L1 cost: on Arbitrum the L1 part is charged as extra L2 gas (receipts' gasUsed
/// already holds it, so gasUsed x effectiveGasPrice is the whole fee), and the estimate side is what needs this contract.
///
/// gasEstimateComponents(to, contractCreation, data) with Arbitrum's documented signature:
///   l1BaseFeeEstimate: storage slot 0 (set with anvil_setStorageAt);
///   gasEstimateForL1:  ceil(16 * (data.length + 140) * l1BaseFeeEstimate / baseFee): 16 units per byte of the
///                      transaction (the calldata plus 140 bytes for the rest of a signed transaction), priced at L1's
///                      base fee and paid in L2 gas at `baseFee` (Arbitrum compresses with brotli first: this over-counts);
///   baseFee:           storage slot 1 when set (non-zero), else block.basefee (eth_call may run at a zero base fee);
///   gasEstimate:       this stand-in cannot run the call as its sender, so it counts only the L1 part
///                      (gasEstimate == gasEstimateForL1); a real node returns L2 execution plus L1 there.
contract NodeInterfaceStandIn {
    uint256 public l1BaseFeeEstimate;
    uint256 public l2BaseFeeOverride;

    function gasEstimateComponents(address, bool, bytes calldata data)
        external
        payable
        returns (uint64 gasEstimate, uint64 gasEstimateForL1, uint256 baseFee, uint256 l1BaseFeeEstimateOut)
    {
        baseFee = l2BaseFeeOverride != 0 ? l2BaseFeeOverride : block.basefee;
        l1BaseFeeEstimateOut = l1BaseFeeEstimate;
        uint256 units = 16 * (data.length + 140);
        uint256 l1Gas = baseFee == 0 ? 0 : (units * l1BaseFeeEstimate + baseFee - 1) / baseFee;
        gasEstimateForL1 = uint64(l1Gas);
        gasEstimate = uint64(l1Gas);
    }
}
