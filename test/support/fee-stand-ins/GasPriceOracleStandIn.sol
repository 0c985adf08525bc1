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
/// It quotes with the Ecotone formula, from the L1Block predeploy's values:
///   fee = l1DataGas * (16 * baseFeeScalar * l1BaseFee + blobBaseFeeScalar * blobBaseFee) / (16 * 10^6)
/// The real Ecotone oracle takes l1DataGas from the bytes passed (4 per zero byte, 16 per other byte, plus 68 * 16 for
/// a signature). Anvil's op mode does NOT charge on the transaction's bytes: measured on this machine, every
/// transaction pays exactly 1,600 units of L1 data gas whatever its size (empty, 5-byte and 2,000-byte calldata alike).
/// This stand-in quotes what the node in front of it charges, so it uses that constant: its quotes equal the charged
/// L1 fee to the wei, which is what the tests compare against balance deltas.
contract GasPriceOracleStandIn {
    IL1Block internal constant L1_BLOCK = IL1Block(0x4200000000000000000000000000000000000015);
    uint256 public constant DECIMALS = 6;
    /// What Anvil 1.7.1's op mode charges per transaction (100 non-zero bytes' worth), independent of the bytes.
    uint256 public constant ANVIL_L1_DATA_GAS = 1600;

    function decimals() external pure returns (uint256) {
        return DECIMALS;
    }

    function isEcotone() external pure returns (bool) {
        return true;
    }

    function isFjord() external pure returns (bool) {
        return false;
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

    function getL1GasUsed(bytes calldata) external pure returns (uint256) {
        return ANVIL_L1_DATA_GAS;
    }

    function getL1Fee(bytes calldata) external view returns (uint256) {
        uint256 scaledBaseFee = uint256(baseFeeScalar()) * 16 * l1BaseFee();
        uint256 scaledBlobBaseFee = uint256(blobBaseFeeScalar()) * blobBaseFee();
        return (ANVIL_L1_DATA_GAS * (scaledBaseFee + scaledBlobBaseFee)) / (16 * 10 ** DECIMALS);
    }
}
