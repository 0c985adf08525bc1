// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Shape of Circle's FiatToken (USDC) and of BSC's Binance-Peg tokens: returns bool, blacklist on both ends and on the
// spender of a transferFrom (`isBlacklisted`, `blacklist`, `unBlacklist`), Pausable (`paused`, `pause`, `unpause`),
// configurable decimals (6 on Ethereum, 18 on BSC).
contract FiatTokenStyle {
    string public name;
    string public symbol;
    uint8 public decimals;
    uint256 public totalSupply;
    address public owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public isBlacklisted;
    bool public paused;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(string memory _name, string memory _symbol, uint8 _decimals) {
        name = _name;
        symbol = _symbol;
        decimals = _decimals;
        owner = msg.sender;
    }

    modifier whenNotPaused() {
        require(!paused, "Pausable: paused");
        _;
    }

    function _move(address from, address to, uint256 value) internal whenNotPaused {
        require(!isBlacklisted[from] && !isBlacklisted[to], "Blacklistable: account is blacklisted");
        require(balanceOf[from] >= value, "ERC20: transfer amount exceeds balance");
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        require(!isBlacklisted[msg.sender], "Blacklistable: account is blacklisted");
        require(allowance[from][msg.sender] >= value, "ERC20: transfer amount exceeds allowance");
        allowance[from][msg.sender] -= value;
        _move(from, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external whenNotPaused returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function mint(address to, uint256 amount) external {
        require(msg.sender == owner, "only owner");
        balanceOf[to] += amount;
        totalSupply += amount;
        emit Transfer(address(0), to, amount);
    }

    function blacklist(address who) external {
        require(msg.sender == owner, "only owner");
        isBlacklisted[who] = true;
    }

    function unBlacklist(address who) external {
        require(msg.sender == owner, "only owner");
        isBlacklisted[who] = false;
    }

    function pause() external {
        require(msg.sender == owner, "only owner");
        paused = true;
    }

    function unpause() external {
        require(msg.sender == owner, "only owner");
        paused = false;
    }
}
