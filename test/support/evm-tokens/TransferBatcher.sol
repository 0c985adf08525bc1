// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Several token transfers in one transaction (exchanges and wallets batch payouts): transferFrom via low-level call so
// that tokens returning nothing (Tether-style) work too.
contract TransferBatcher {
    function pay(address token, address[] calldata to, uint256[] calldata amounts) external {
        require(to.length == amounts.length, "length");
        for (uint256 i = 0; i < to.length; i++) {
            (bool ok, bytes memory ret) = token.call(
                abi.encodeWithSignature("transferFrom(address,address,uint256)", msg.sender, to[i], amounts[i])
            );
            require(ok && (ret.length == 0 || abi.decode(ret, (bool))), "transfer failed");
        }
    }
}
