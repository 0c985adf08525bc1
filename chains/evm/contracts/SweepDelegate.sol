// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

/// @title SweepDelegate: the EIP-7702 delegate of the gateway's deposit addresses (docs/treasury-evm-7702.md).
/// @notice One contract plays two roles:
///   - deployed at its own address (the ENTRY, deployed once per gas station and merchant destinations through the
///     deterministic CREATE2 deployer), `sweep` is the batch entry point: only the gas station may call it;
///   - as the code of a deposit address that signed an EIP-7702 authorization for it, `pull` moves an explicit token
///     amount out of that deposit address, to one of the deployment's two bound destinations: only the ENTRY may call
///     it.
/// So one type-4 transaction from the gas station to the ENTRY, carrying the deposit addresses' authorizations, sweeps
/// many addresses, each its own amount, and deposit addresses never need native coin. The destinations are in the code
/// (immutables), and a deposit address runs this code only because its own key authorized this deployment: so the
/// deposit key, not the gas station, decides where its tokens may go.
///
/// Invariants (each enforced below, on every call):
///   I1. `sweep` runs only when called by GAS_STATION (an immutable of this deployment), and only at the ENTRY itself,
///       never through a delegated deposit address.
///   I2. `pull` runs only when called by ENTRY (this deployment's own address, an immutable captured at construction),
///       and only through a delegated deposit address, never at the ENTRY.
///   I3. Only explicit amounts move: `pull` transfers exactly `amount` of `token` to `to`; nothing reads a balance to
///       decide what to move, and no call sends native coin. Native coin sent to a delegated deposit address is
///       accepted (`receive`, as before delegation, so the gas top-up fallback still works), and only the deposit key's
///       own transaction can move it: this code never can.
///   I4. A transfer counts as done only when `token` has code, and the call did not revert and returned nothing
///       (Tether's `transfer`) or exactly one ABI-encoded `true`; anything else reverts the whole batch.
///   I5. Every source named in a batch either ran this code and answered PULLED, or the whole batch reverts: a source
///       that is not (or no longer) delegated to this code cannot be silently skipped.
///   I6. No storage: the contract reads and writes no storage slot, so it cannot collide with what another delegate
///       left in a deposit address's storage, and it holds no state an attacker could change. Its only data are the
///       four immutables in its code.
///   I7. No external call other than the token `transfer` (in `pull`) and `pull` itself (in `sweep`); no delegatecall,
///       no selfdestruct, no upgrade path: the code at an address is the code of this source, forever.
///   I8. Tokens leave a deposit address only to DESTINATION_0 or DESTINATION_1 (immutables fixed at deployment: the
///       merchant's treasury and refunds hot wallet): `pull` refuses any other `to`, whoever holds the gas-station key.
contract SweepDelegate {
    /// The only account that may start a sweep (I1): the deployment's gas station (BIP44 account 0, slot 0).
    address public immutable GAS_STATION;
    /// This deployment's own address, captured at construction (I2): inside a deposit address's delegated execution,
    /// `address(this)` is the deposit address, while ENTRY stays the deployed contract.
    address public immutable ENTRY;
    /// The only recipients of a `pull` (I8); equal when the merchant has one destination.
    address public immutable DESTINATION_0;
    address public immutable DESTINATION_1;

    /// What `pull` returns after a completed transfer (I5).
    bytes4 public constant PULLED = SweepDelegate.pull.selector;

    error NotGasStation();
    error NotEntry();
    error NotDestination(address to);
    error LengthMismatch();
    error TransferFailed(address source);
    error NotPulled(address source);

    constructor(address gasStation, address destination0, address destination1) {
        require(gasStation != address(0) && destination0 != address(0) && destination1 != address(0));
        GAS_STATION = gasStation;
        ENTRY = address(this);
        DESTINATION_0 = destination0;
        DESTINATION_1 = destination1;
    }

    /// Moves `amounts[i]` of `token` from each `sources[i]` (a deposit address delegated to this code) to `to`.
    /// All or nothing: one refused transfer reverts every transfer of the batch.
    function sweep(address token, address to, address[] calldata sources, uint256[] calldata amounts) external {
        // I1: the gas station, at the entry only.
        if (msg.sender != GAS_STATION || address(this) != ENTRY) revert NotGasStation();
        if (sources.length != amounts.length) revert LengthMismatch();
        for (uint256 i = 0; i < sources.length; i++) {
            // I5: a source without this code has no code (extcodesize 0: the call reverts) or answers something else.
            if (SweepDelegate(payable(sources[i])).pull(token, to, amounts[i]) != PULLED) revert NotPulled(sources[i]);
        }
    }

    /// A delegated deposit address receives native coin as a plain account does (I3): nothing here can spend it.
    receive() external payable {}

    /// Runs as the code of a delegated deposit address: transfers exactly `amount` of `token` from it to `to`, one of
    /// the two bound destinations.
    function pull(address token, address to, uint256 amount) external returns (bytes4) {
        // I2: the entry only, and only through a deposit address's delegation.
        if (msg.sender != ENTRY || address(this) == ENTRY) revert NotEntry();
        // I8: only to a destination the deposit key authorized (by delegating to this deployment).
        if (to != DESTINATION_0 && to != DESTINATION_1) revert NotDestination(to);
        // I4: a call to an address without code "succeeds" with nothing returned: only a contract can be a token.
        if (token.code.length == 0) revert TransferFailed(address(this));
        // I3, I4: a low-level call, so that Tether's `transfer` (which returns nothing) is accepted.
        (bool ok, bytes memory ret) = token.call(abi.encodeWithSelector(0xa9059cbb, to, amount));
        if (!ok || !(ret.length == 0 || (ret.length == 32 && abi.decode(ret, (uint256)) == 1))) revert TransferFailed(address(this));
        return PULLED;
    }
}
