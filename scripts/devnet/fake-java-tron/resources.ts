// THIS IS A FAKE. The resource model of the fake java-tron (chain.ts), written from TRON's documentation (resource
// model, Stake 2.0): staking TRX (freezebalancev2) yields energy or bandwidth in proportion to the whole network's
// stake, `(staked TRX / TotalEnergyWeight) × TotalEnergyLimit`; staked resources can be delegated to an activated
// account (delegateresource) and taken back (undelegateresource); the receiver uses delegated energy as its own.
// When a delegation ends, the share of the receiver's usage it carried moves to the delegator (java-tron's Stake 2.0
// rule), so delegated energy that was used stays spent for the delegator until it recovers. Recovery over the 24 h
// window is NOT modelled: `recoverAll()` stands for a day passing.

export const TRX = 1_000_000n;
export const FREE_NET_LIMIT = 600n;

export interface FakeAccount {
  balanceSun: bigint;
  createTime: number;
  /** Stake 2.0: TRX (sun) frozen for each resource, including what is delegated out. */
  frozenEnergySun: bigint;
  frozenBandwidthSun: bigint;
  /** Of the frozen TRX, what backs resources delegated to others. */
  delegatedEnergySun: bigint;
  delegatedBandwidthSun: bigint;
  /** Frozen TRX of others whose resources were delegated to this account. */
  acquiredEnergySun: bigint;
  acquiredBandwidthSun: bigint;
  /** Test knob (setStaked): resources granted directly, on top of what stake yields. */
  extraEnergy: bigint;
  extraNet: bigint;
  energyUsed: bigint;
  netUsed: bigint;
  freeNetUsed: bigint;
}

export function newAccount(): FakeAccount {
  return {
    balanceSun: 0n,
    createTime: Date.now(),
    frozenEnergySun: 0n,
    frozenBandwidthSun: 0n,
    delegatedEnergySun: 0n,
    delegatedBandwidthSun: 0n,
    acquiredEnergySun: 0n,
    acquiredBandwidthSun: 0n,
    extraEnergy: 0n,
    extraNet: 0n,
    energyUsed: 0n,
    netUsed: 0n,
    freeNetUsed: 0n,
  };
}

const pos = (v: bigint) => (v > 0n ? v : 0n);

/** Network totals and each account's limits, derived from stake like java-tron's EnergyProcessor / BandwidthProcessor. */
export class ResourceBook {
  /** TotalEnergyCurrentLimit (mainnet: 180,000,000,000 energy a day for the whole network). */
  totalEnergyLimit = 180_000_000_000n;
  /** TotalNetLimit (43,200,000,000 bytes a day). */
  totalNetLimit = 43_200_000_000n;
  /** TRX staked for energy / bandwidth by accounts outside this fake (the rest of the network): sets the yield per TRX. */
  outsideEnergyWeightTrx = 18_000_000_000n;
  outsideNetWeightTrx = 40_000_000_000n;
  /** Delegations by `${owner}>${receiver}`: the frozen sun behind each. */
  readonly delegations = new Map<string, { energySun: bigint; bandwidthSun: bigint }>();

  constructor(private readonly accounts: Map<string, FakeAccount>) {}

  /** TotalEnergyWeight: whole TRX staked for energy network-wide. */
  energyWeight(): bigint {
    let w = this.outsideEnergyWeightTrx;
    for (const a of this.accounts.values()) w += a.frozenEnergySun / TRX;
    return w;
  }

  netWeight(): bigint {
    let w = this.outsideNetWeightTrx;
    for (const a of this.accounts.values()) w += a.frozenBandwidthSun / TRX;
    return w;
  }

  /** Energy a day that `sun` staked yields: (sun / 1 TRX) × TotalEnergyLimit / TotalEnergyWeight. */
  energyOf(sun: bigint): bigint {
    return ((sun / TRX) * this.totalEnergyLimit) / this.energyWeight();
  }

  netOf(sun: bigint): bigint {
    return ((sun / TRX) * this.totalNetLimit) / this.netWeight();
  }

  energyLimit(a: FakeAccount): bigint {
    return this.energyOf(a.frozenEnergySun - a.delegatedEnergySun + a.acquiredEnergySun) + a.extraEnergy;
  }

  netLimit(a: FakeAccount): bigint {
    return this.netOf(a.frozenBandwidthSun - a.delegatedBandwidthSun + a.acquiredBandwidthSun) + a.extraNet;
  }

  /** getcandelegatedmaxsize: own frozen sun not delegated, less the share backing energy already used. */
  canDelegateMax(a: FakeAccount, resource: 'ENERGY' | 'BANDWIDTH'): bigint {
    if (resource === 'ENERGY') {
      const own = a.frozenEnergySun - a.delegatedEnergySun;
      return pos(own - (a.energyUsed * this.energyWeight() * TRX) / this.totalEnergyLimit);
    }
    const own = a.frozenBandwidthSun - a.delegatedBandwidthSun;
    return pos(own - (a.netUsed * this.netWeight() * TRX) / this.totalNetLimit);
  }

  delegate(owner: string, o: FakeAccount, receiver: string, r: FakeAccount, resource: 'ENERGY' | 'BANDWIDTH', sun: bigint): void {
    const key = `${owner}>${receiver}`;
    const d = this.delegations.get(key) ?? { energySun: 0n, bandwidthSun: 0n };
    if (resource === 'ENERGY') {
      o.delegatedEnergySun += sun;
      r.acquiredEnergySun += sun;
      d.energySun += sun;
    } else {
      o.delegatedBandwidthSun += sun;
      r.acquiredBandwidthSun += sun;
      d.bandwidthSun += sun;
    }
    this.delegations.set(key, d);
  }

  /** Ends `sun` of a delegation; the receiver's usage carried by it moves to the owner. */
  undelegate(owner: string, o: FakeAccount, receiver: string, r: FakeAccount, resource: 'ENERGY' | 'BANDWIDTH', sun: bigint): void {
    const key = `${owner}>${receiver}`;
    const d = this.delegations.get(key)!;
    if (resource === 'ENERGY') {
      const limit = this.energyLimit(r);
      const share = this.energyOf(sun);
      const used = r.energyUsed < limit ? r.energyUsed : limit;
      const moved = limit > 0n ? (used * (share < limit ? share : limit)) / limit : 0n;
      r.energyUsed -= moved;
      o.energyUsed += moved;
      o.delegatedEnergySun -= sun;
      r.acquiredEnergySun -= sun;
      d.energySun -= sun;
    } else {
      const limit = this.netLimit(r);
      const share = this.netOf(sun);
      const used = r.netUsed < limit ? r.netUsed : limit;
      const moved = limit > 0n ? (used * (share < limit ? share : limit)) / limit : 0n;
      r.netUsed -= moved;
      o.netUsed += moved;
      o.delegatedBandwidthSun -= sun;
      r.acquiredBandwidthSun -= sun;
      d.bandwidthSun -= sun;
    }
    if (d.energySun === 0n && d.bandwidthSun === 0n) this.delegations.delete(key);
  }

  delegated(owner: string, receiver: string): { energySun: bigint; bandwidthSun: bigint } {
    return this.delegations.get(`${owner}>${receiver}`) ?? { energySun: 0n, bandwidthSun: 0n };
  }
}
