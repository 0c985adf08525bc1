// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

// Shape of Tether's USDT on Ethereum: transfer/transferFrom/approve return nothing, an optional fee that is sent to
// the owner with its own Transfer event (emitted before the main one), a blacklist of senders only (`isBlackListed`,
// `addBlackList`, `removeBlackList`), Pausable (`paused`, `pause`, `unpause`: transfers refused while paused),
// `uint public decimals`.
contract TetherStyleToken {
    string public name;
    string public symbol;
    uint public decimals;
    uint public totalSupply;
    uint public basisPointsRate;
    uint public maximumFee;
    address public owner;
    mapping(address => uint) internal balances;
    mapping(address => mapping(address => uint)) internal allowed;
    mapping(address => bool) public isBlackListed;
    bool public paused;

    event Transfer(address indexed from, address indexed to, uint value);
    event Approval(address indexed owner, address indexed spender, uint value);

    constructor(string memory _name, string memory _symbol, uint _decimals) {
        name = _name;
        symbol = _symbol;
        decimals = _decimals;
        owner = msg.sender;
    }

    modifier onlyOwner() {
        require(msg.sender == owner);
        _;
    }

    modifier whenNotPaused() {
        require(!paused);
        _;
    }

    function balanceOf(address who) public view returns (uint) {
        return balances[who];
    }

    function allowance(address _owner, address spender) public view returns (uint) {
        return allowed[_owner][spender];
    }

    function _move(address from, address to, uint value) internal {
        require(!isBlackListed[from]);
        uint fee = (value * basisPointsRate) / 10000;
        if (fee > maximumFee) fee = maximumFee;
        uint sendAmount = value - fee;
        require(balances[from] >= value);
        balances[from] -= value;
        balances[to] += sendAmount;
        if (fee > 0) {
            balances[owner] += fee;
            emit Transfer(from, owner, fee);
        }
        emit Transfer(from, to, sendAmount);
    }

    function transfer(address to, uint value) public whenNotPaused {
        _move(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint value) public whenNotPaused {
        require(allowed[from][msg.sender] >= value);
        allowed[from][msg.sender] -= value;
        _move(from, to, value);
    }

    function approve(address spender, uint value) public {
        require(!((value != 0) && (allowed[msg.sender][spender] != 0)));
        allowed[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function issue(address to, uint amount) public onlyOwner {
        balances[to] += amount;
        totalSupply += amount;
        emit Transfer(address(0), to, amount);
    }

    function setParams(uint newBasisPoints, uint newMaxFee) public onlyOwner {
        basisPointsRate = newBasisPoints;
        maximumFee = newMaxFee;
    }

    function addBlackList(address who) public onlyOwner {
        isBlackListed[who] = true;
    }

    function removeBlackList(address who) public onlyOwner {
        isBlackListed[who] = false;
    }

    function pause() public onlyOwner {
        paused = true;
    }

    function unpause() public onlyOwner {
        paused = false;
    }
}
